"""``workbench mcp`` answers the handshake before loading the SDK, and stops on SIGINT.

Issue 20, item 2: the server took 3.5-7 s to answer ``initialize`` on a loaded machine, so
Claude Code's version probe timed out on every session; and it ignored SIGINT until stdin
closed. No timing here (bench/mcp_start.py prints the figures): the observable is what the
real server process imported, from its own ``-X importtime`` report on stderr, while it
answered ``initialize``, ``tools/list`` and ``ping`` over real stdio and then exited.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, base_env, free_port
from tests.mcp_stdio import RawClient
from workbench.mcp_server.front import LISTS
from workbench.mcp_server.handshake import sdk_replies

HEAVY = ["mcp", "mcp_types", "pydantic", "pydantic_settings", "httpx", "anyio", "typer"]
VERSIONS = ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01"]


def imported(importtime: str) -> set[str]:
    """The top-level packages named in a ``-X importtime`` report."""
    names = set()
    for line in importtime.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def server(data_dir: Path, *flags: str, cwd: Path = ROOT) -> RawClient:
    command = [sys.executable, *flags, "-m", "workbench", "mcp", "--no-start"]
    return RawClient(command, base_env(data_dir, free_port()), cwd)


def initialize(version: str, request_id: Any = "init") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "0"},
        },
    }


def test_handshake_tools_list_and_ping_are_answered_without_loading_the_sdk(
    data_dir: Path,
) -> None:
    client = server(data_dir, "-X", "importtime")
    try:
        assert client.initialize()["result"]["serverInfo"]["name"] == "workbench"
        client.send({"id": 2, "method": "tools/list"})
        assert "save_memory" in {t["name"] for t in client.reply(2)["result"]["tools"]}
        client.send({"id": 3, "method": "ping"})
        assert client.reply(3)["result"] == {}
        client.send({"id": 4, "method": "resources/list"})
        assert client.reply(4)["result"] == {"resources": []}
    finally:
        assert client.close() == 0
    loaded = imported(client.stderr_at_exit())
    assert "workbench" in loaded  # the report is there
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_the_first_tool_call_loads_the_sdk_which_serves_the_rest(data_dir: Path) -> None:
    client = server(data_dir, "-X", "importtime")
    try:
        client.initialize()
        client.send({"id": 2, "method": "tools/list"})
        client.reply(2)
        client.send({"id": 3, "method": "tools/call", "params": {"name": "workflow"}})
        workflow = client.reply(3, timeout=120)["result"]
        assert "search" in workflow["content"][0]["text"]
        # line_check (the SDK side) answers what the fast path left to it.
        client.send_line(
            b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": '
            b'{"name": "search", "arguments": {"query": "\\ud800"}}}'
        )
        assert client.reply(4)["error"]["code"] == -32602
        client.send({"id": 5, "method": "tools/list"})
        assert client.reply(5)["result"]["tools"] == client.reply(2)["result"]["tools"]
    finally:
        assert client.close() == 0
    assert "mcp" in imported(client.stderr_at_exit())
    assert client.count("workbench-front-replayed-initialize") == 0  # the replay stays inside


@pytest.mark.parametrize("version", VERSIONS)
def test_the_fast_answers_are_the_sdk_servers_own(
    version: str, data_dir: Path, tmp_path: Path
) -> None:
    """Fails while handshake.json is stale: run `python -m workbench.mcp_server.handshake`."""
    project = tmp_path / "rocket-lab"
    project.mkdir()
    env = base_env(data_dir, free_port(), CLAUDE_PROJECT_DIR=str(project))
    requests = [
        initialize(version, 1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *[{"jsonrpc": "2.0", "id": n, "method": method} for n, method in enumerate(LISTS, 2)],
    ]
    expected = sdk_replies(requests, env)
    client = RawClient([sys.executable, "-m", "workbench", "mcp", "--no-start"], env, ROOT)
    try:
        for request in requests:
            client.send_line(json.dumps(request).encode())
        got = [client.reply(n) for n in range(1, len(LISTS) + 2)]
    finally:
        client.close()
    assert got == expected, "stale: run `python -m workbench.mcp_server.handshake`"
    assert "rocket-lab" in json.dumps(got[1])


@pytest.mark.parametrize("after", ["handshake", "tool call"])
def test_sigint_stops_the_server_at_once_without_a_traceback(after: str, data_dir: Path) -> None:
    """Claude Code sends SIGINT, then SIGTERM 100 ms later: the server exits 0 at once, and
    with the SDK loaded (after a tool call) skips the interpreter's teardown (~0.37 s), which
    ``python -v`` would report as ``# cleanup[...]`` lines."""
    client = server(data_dir, "-v")
    try:
        client.initialize()
        if after == "tool call":
            client.send({"id": 2, "method": "tools/call", "params": {"name": "workflow"}})
            assert "search" in json.dumps(client.reply(2, timeout=120))
        client.proc.send_signal(signal.SIGINT)
        code = client.proc.wait(timeout=30)  # stdin stays open: only SIGINT can end it
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()
    stderr = client.stderr_at_exit()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert "# cleanup[" not in stderr
    if after == "tool call":
        assert "import 'mcp" in stderr or "mcp/__init__" in stderr  # the SDK was loaded


def test_a_server_that_cannot_load_says_why_and_exits_instead_of_hanging(data_dir: Path) -> None:
    """Bad settings used to stop ``workbench mcp`` at start; now they surface at the first
    tool call, which must not leave the client waiting for a reply that never comes."""
    env = base_env(data_dir, free_port(), WORKBENCH_EMBEDDER="bogus")
    client = RawClient([sys.executable, "-m", "workbench", "mcp", "--no-start"], env, ROOT)
    try:
        client.initialize()
        client.send({"id": 2, "method": "tools/call", "params": {"name": "workflow"}})
        code = client.proc.wait(timeout=120)  # stdin stays open: the server ends by itself
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()
    assert code == 1
    assert "workbench mcp: the server stopped" in client.stderr_at_exit()
    assert "embedder" in client.stderr_at_exit()
