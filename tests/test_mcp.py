"""``workbench mcp`` over stdio, driven by the real MCP client against a real service.

Each MCP session costs about a second, so the module runs one scripted session against one
service (``session_log``) and the tests below each assert on their part of it. Two more
sessions cover a service that is down: refused with ``--no-start`` (the message says how to
start it), and started on demand, checked through the raw protocol so that every byte on the
server's stdout is seen (stdout is the protocol channel; nothing else may appear there).
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import ROOT, Service, base_env, free_port

TOOLS = {"search", "timeline", "get_observations", "save_memory", "workflow"}
MEMORY = "The flux capacitor needs 1.21 gigawatts; the plutonium feed is in tools/reactor.py."


def params(data_dir: Path, port: int, *extra: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "workbench", "mcp", *extra],
        env=base_env(data_dir, port, **env),
        cwd=str(ROOT),
    )


def run_session(
    server: StdioServerParameters,
    script: Callable[[ClientSession], Awaitable[Any]],
    errlog: Path,
) -> Any:
    """Start the server, initialise a client session, run ``script`` in it, shut down.

    The server's stderr goes to ``errlog`` (pytest's captured stderr has no file descriptor).
    """

    async def main() -> Any:
        with errlog.open("a", encoding="utf-8") as errors:
            async with stdio_client(server, errlog=errors) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(120):
                        await session.initialize()
                        return await script(session)

    return anyio.run(main)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


# ----- one scripted session against one running service ---------------------------------------


@pytest.fixture(scope="module")
def session_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data_dir = tmp_path_factory.mktemp("mcp") / "data"
    data_dir.mkdir()
    port = free_port()
    service = Service(data_dir=data_dir, port=port, env=base_env(data_dir, port)).start()
    project_dir = data_dir.parent / "rocket-lab"
    project_dir.mkdir()

    async def script(session: ClientSession) -> dict[str, Any]:
        log: dict[str, Any] = {"tools": (await session.list_tools()).tools, "data_dir": data_dir}
        call = session.call_tool
        log["workflow"] = await call("workflow", {})
        log["save"] = await call("save_memory", {"text": MEMORY, "title": "Flux capacitor"})
        saved = json.loads(text_of(log["save"]))
        log["saved"] = saved
        log["get"] = await call("get_observations", {"ids": [saved["id"]]})
        log["get_missing"] = await call("get_observations", {"ids": [saved["id"], 999_999]})
        log["get_bad"] = await call("get_observations", {"ids": ["x"]})
        log["get_empty"] = await call("get_observations", {"ids": []})
        log["search"] = await call("search", {"query": "flux capacitor gigawatts"})
        log["search_nothing"] = await call("search", {})
        log["timeline"] = await call("timeline", {"anchor": saved["id"]})
        return log

    try:
        server = params(data_dir, port, CLAUDE_PROJECT_DIR=str(project_dir))
        yield run_session(server, script, data_dir.parent / "mcp-stderr.log")
    finally:
        service.stop()


def test_lists_the_recall_tools_with_valid_json_schemas(session_log: dict[str, Any]) -> None:
    tools = {tool.name: tool for tool in session_log["tools"]}
    assert set(tools) >= TOOLS
    for name, tool in tools.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name), name
        assert len(tool.description or "") > 60, name
        schema = tool.input_schema
        jsonschema.validators.validator_for(schema).check_schema(schema)
        assert schema["type"] == "object"
    ids = tools["get_observations"].input_schema["properties"]["ids"]
    assert ids["type"] == "array"
    # an observation id, or (issue 12) a colleague's team:AUTHOR:ID ref
    assert [t["type"] for t in ids["items"]["anyOf"]] == ["integer", "string"]
    assert tools["get_observations"].input_schema["required"] == ["ids"]
    assert "50-100 tokens per hit" in tools["search"].description
    for step in ("search", "timeline", "get_observations"):
        assert step in tools["workflow"].description


def test_workflow_returns_the_three_layer_guidance(session_log: dict[str, Any]) -> None:
    result = session_log["workflow"]
    assert not result.is_error
    text = text_of(result)
    assert text.index("1. search") < text.index("2. timeline") < text.index("3. get_observations")
    assert "tokens" in text


def test_save_memory_then_get_observations_returns_its_text(session_log: dict[str, Any]) -> None:
    assert not session_log["save"].is_error, text_of(session_log["save"])
    saved = session_log["saved"]
    assert isinstance(saved["id"], int)
    # No project given: the session's project (Claude Code's CLAUDE_PROJECT_DIR) is used.
    assert saved["project"] == "rocket-lab"
    result = session_log["get"]
    assert not result.is_error, text_of(result)
    [observation] = json.loads(text_of(result))["observations"]
    assert observation["id"] == saved["id"]
    assert observation["title"] == "Flux capacitor"
    assert MEMORY in observation["narrative"]
    assert observation["project"] == "rocket-lab"
    # This folder's memory (issue 19 item 8), not every folder called rocket-lab's.
    project_dir = session_log["data_dir"].parent / "rocket-lab"
    assert observation["project_key"] == str(project_dir.resolve())
    assert "content_hash" not in observation  # bookkeeping is not worth the agent's tokens
    partial = json.loads(text_of(session_log["get_missing"]))
    assert [o["id"] for o in partial["observations"]] == [saved["id"]]
    assert partial["missing"] == [999_999]


def test_get_observations_is_recorded_in_the_ledger_as_an_mcp_fetch(
    session_log: dict[str, Any],
) -> None:
    db = session_log["data_dir"] / "workbench.db"
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT observation_id, source FROM fetches").fetchall()
    saved = session_log["saved"]["id"]
    assert sorted(rows) == [(saved, "mcp"), (saved, "mcp")]  # "get" and "get_missing"


def test_bad_arguments_are_tool_errors_with_a_message(session_log: dict[str, Any]) -> None:
    for key in ("get_bad", "get_empty"):
        result = session_log[key]
        assert result.is_error
        assert "ids" in text_of(result)
    assert "integer" in text_of(session_log["get_bad"])


def test_search_finds_the_saved_memory(session_log: dict[str, Any]) -> None:
    result = session_log["search"]
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert str(session_log["saved"]["id"]) in text
    assert "Flux capacitor" in text


def test_search_without_query_or_filter_is_the_services_error(
    session_log: dict[str, Any],
) -> None:
    result = session_log["search_nothing"]
    assert result.is_error
    assert "query" in text_of(result).lower()


def test_timeline_around_the_saved_memory(session_log: dict[str, Any]) -> None:
    result = session_log["timeline"]
    assert not result.is_error, text_of(result)
    assert "Flux capacitor" in text_of(result)


# ----- the service is down ---------------------------------------------------------------------


def test_service_down_with_no_start_says_how_to_start_it(data_dir: Path) -> None:
    async def script(session: ClientSession) -> Any:
        return await session.call_tool("save_memory", {"text": "anything"})

    server = params(data_dir, free_port(), "--no-start")
    result = run_session(server, script, data_dir.parent / "mcp-stderr.log")
    assert result.is_error
    assert "not running" in text_of(result)
    assert "workbench serve --detach" in text_of(result)


class RawServer:
    """``workbench mcp`` under ``subprocess``: JSON-RPC lines in, every stdout line kept."""

    def __init__(self, data_dir: Path, port: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workbench", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=base_env(data_dir, port),
            cwd=ROOT,
        )
        self.lines: list[bytes] = []
        self._watchdog = threading.Timer(120, self.proc.kill)  # never hang the suite
        self._watchdog.start()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while line := self.proc.stdout.readline():
            self.lines.append(line)
            message = json.loads(line)  # a non-JSON line would fail right here
            if message.get("id") == request_id:
                return message
        raise AssertionError(f"stdout closed before reply {request_id}: {self.stderr()}")

    def close(self) -> tuple[list[bytes], str]:
        rest, err = self.proc.communicate(timeout=30)  # closes stdin: the client is done
        self._watchdog.cancel()
        self.lines.extend(rest.splitlines(keepends=True))
        return self.lines, err.decode()

    def stderr(self) -> str:
        self.proc.kill()
        return self.proc.communicate()[1].decode()


@pytest.mark.slow
def test_service_down_is_started_and_stdout_carries_only_the_protocol(data_dir: Path) -> None:
    from workbench.pidfile import read_pid, terminate

    port = free_port()
    server = RawServer(data_dir, port)
    try:
        server.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "pytest", "version": "0"},
                },
            }
        )
        assert server.reply(1)["result"]["serverInfo"]["name"] == "workbench"
        server.send({"method": "notifications/initialized"})
        arguments = {"text": "started on demand", "project": "p"}
        server.send(
            {
                "id": 2,
                "method": "tools/call",
                "params": {"name": "save_memory", "arguments": arguments},
            }
        )
        result = server.reply(2)["result"]
        assert not result.get("isError"), result
        saved = json.loads(result["content"][0]["text"])
        assert saved["project"] == "p"
        assert saved["id"] >= 1
        lines, stderr = server.close()
        # The rule of every command that needs the service (issue 19, item 13): the MCP
        # server started a temporary one, and stopped it when its session ended.
        still_running = read_pid(data_dir / "service.pid")
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        terminate(data_dir / "service.pid")  # in case it did not
    assert still_running is None
    assert server.proc.returncode == 0, stderr
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert "Traceback" not in stderr
    assert (data_dir / "logs" / "mcp.log").read_text().count("starting the workbench service") == 1
