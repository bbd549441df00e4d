"""``save_memory`` through MCP is stored as the agent that launched the server (issue 20 item 14).

Every agent's MCP server used to save its memories as ``claude-code``: the save route had no
platform field and the server did not know who started it. Now ``workbench install --agent X``
registers ``-m workbench mcp --platform X``, the server sends ``platformSource`` with every
save, and the route stores it (a platform no adapter sends is a precise 422). A registration
written before this (no ``--platform``) keeps working, as Claude Code's.

Real parts: the CLI installs into a temporary HOME, a real MCP client starts the server from
the command each agent's config file holds, against a real service, and the row is read back.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters

from tests.agent_home import agent_env
from tests.conftest import ROOT, Service, base_env, free_port, run_workbench
from tests.test_mcp import run_session, text_of
from workbench.platforms import PLATFORM_SOURCES

# agent -> the platform_source its memories carry
AGENTS = {
    "codex": "codex-cli",
    "gemini": "gemini-cli",
    "opencode": "opencode",
    "cursor": "cursor",
    "windsurf": "windsurf",
}


@dataclass(frozen=True)
class World:
    home: Path
    service: Service


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One HOME where every agent got ``workbench install --agent``, and one service."""
    base = tmp_path_factory.mktemp("save-platform")
    home = base / "home"
    for folder in (".gemini", "codex", ".config/opencode", ".cursor", ".codeium/windsurf"):
        (home / folder).mkdir(parents=True)
    data = base / "data"
    data.mkdir()
    env = agent_env(home, data, CODEX_HOME=str(home / "codex"))
    for agent in AGENTS:
        proc = run_workbench(env, "install", "--agent", agent)
        assert proc.returncode == 0, (agent, proc.stdout, proc.stderr)
    port = free_port()
    service = Service(data_dir=data, port=port, env=base_env(data, port)).start()
    try:
        yield World(home, service)
    finally:
        service.stop()


def registered(agent: str, home: Path) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) of our server as ``agent``'s config file holds it."""
    if agent == "codex":
        entry = tomllib.loads((home / "codex" / "config.toml").read_text("utf-8"))
        server = entry["mcp_servers"]["workbench"]
        return server["command"], server["args"], server.get("env", {})
    if agent == "opencode":
        config = json.loads((home / ".config/opencode/opencode.json").read_text("utf-8"))
        server = config["mcp"]["workbench"]
        return server["command"][0], server["command"][1:], server.get("environment", {})
    path = {
        "gemini": home / ".gemini" / "settings.json",
        "cursor": home / ".cursor" / "mcp.json",
        "windsurf": home / ".codeium" / "windsurf" / "mcp_config.json",
    }[agent]
    server = json.loads(path.read_text("utf-8"))["mcpServers"]["workbench"]
    return server["command"], server["args"], server.get("env", {})


def save_through(svc: Service, command: str, args: list[str], env: dict[str, str]) -> int:
    """Start the server as registered (pointed at ``svc``), call save_memory, return the id."""
    server = StdioServerParameters(
        command=command,
        args=args,
        env={**base_env(svc.data_dir, svc.port), **env},
        cwd=str(ROOT),
    )

    async def script(session: ClientSession) -> Any:
        return await session.call_tool("save_memory", {"text": f"saved via {args[-1]}"})

    result = run_session(server, script, svc.data_dir.parent / "mcp-stderr.log")
    assert not result.is_error, text_of(result)
    saved = json.loads(text_of(result))
    assert saved["status"] == "stored", saved
    return int(saved["id"])


def platform_of(svc: Service, observation_id: int) -> str:
    db = svc.data_dir / "workbench.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        row = conn.execute(
            "SELECT platform_source FROM observations WHERE id = ?", (observation_id,)
        ).fetchone()
    conn.close()
    assert row is not None
    return str(row[0])


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_memory_saved_through_an_agents_server_is_that_agents(agent: str, world: World) -> None:
    command, args, env = registered(agent, world.home)
    saved = save_through(world.service, command, args, env)
    assert platform_of(world.service, saved) == AGENTS[agent]
    assert args[-2:] == ["--platform", agent]


def test_a_registration_from_before_the_platform_keeps_working(world: World) -> None:
    """Written by an older install (no ``--platform``): saved, as Claude Code's."""
    saved = save_through(world.service, sys.executable, ["-P", "-m", "workbench", "mcp"], {})
    assert platform_of(world.service, saved) == "claude-code"


# ----- the route and the command line -----------------------------------------------------------


@pytest.mark.parametrize("source", sorted(PLATFORM_SOURCES))
def test_the_save_route_stores_the_platform_it_is_given(source: str, world: World) -> None:
    status, saved = world.service.post(
        "/api/memory/save", {"text": f"route {source}", "platformSource": source}
    )
    assert status == 200, saved
    assert platform_of(world.service, saved["id"]) == source


@pytest.mark.parametrize("source", ["codex", "Gemini-CLI", "", "claude code", 7, None])
def test_the_save_route_refuses_an_unknown_platform_by_name(source: Any, world: World) -> None:
    status, reply = world.service.post(
        "/api/memory/save", {"text": "a note", "platformSource": source}
    )
    assert status == 422, reply
    message = json.dumps(reply)
    assert "platformSource" in message
    assert "gemini-cli" in message  # the known values are listed: the fix


@pytest.mark.parametrize("argv", [["--platform", "banana"], ["--platform"], ["--platform="]])
def test_mcp_refuses_an_unknown_agent_and_names_the_known_ones(
    argv: list[str], data_dir: Path
) -> None:
    proc = run_workbench(base_env(data_dir, free_port()), "mcp", *argv, timeout=60)
    assert proc.returncode != 0
    assert "--platform" in proc.stderr, proc.stderr
    if argv != ["--platform"]:  # a value was given: the known ones are the fix
        assert "codex" in proc.stderr, proc.stderr
        assert "gemini" in proc.stderr, proc.stderr
    assert proc.stdout == ""  # stdout is the protocol channel: never a word there


def test_install_again_gives_an_old_registration_its_platform(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    settings = home / ".gemini" / "settings.json"
    old = {"command": sys.executable, "args": ["-P", "-m", "workbench", "mcp"], "env": {}}
    settings.write_text(json.dumps({"mcpServers": {"workbench": old}}), encoding="utf-8")
    proc = run_workbench(agent_env(home), "install", "--agent", "gemini")
    assert proc.returncode == 0, proc.stderr  # an entry of ours, not a foreign one: updated
    entry = json.loads(settings.read_text("utf-8"))["mcpServers"]["workbench"]
    assert entry["args"] == ["-P", "-m", "workbench", "mcp", "--platform", "gemini"]
