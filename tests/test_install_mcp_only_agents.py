"""GitHub Copilot CLI, Goose, Roo Code and Warp: ``install --agent`` registers the MCP server only.

Each through the real CLI in a temporary HOME holding the agent's folder and a config file of
the user's own (other servers, other keys; YAML comments for Goose): install adds exactly our
entry in the agent's format (taken from its docs or source, cited in ``workbench/agents/``),
again changes nothing, uninstall gives the file back byte for byte; ``doctor`` has a row for
each; a foreign ``workbench`` entry and a broken file are refused untouched; and a real MCP
client starts the server from what the file holds, in a project with a decoy ``workbench``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.agent_home import agent_env, backups, doctor_rows
from tests.conftest import run_workbench
from tests.mcp_stdio import tool_names
from tests.real_agents import program

pytestmark = pytest.mark.slow

ROO = ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline"
FILES = {
    "copilot": ".copilot/mcp-config.json",
    "roo": f"{ROO}/settings/mcp_settings.json",
    "warp": ".warp/.mcp.json",
    "goose": ".config/goose/config.yaml",
}
FOLDERS = {"copilot": ".copilot", "roo": ROO, "warp": ".warp", "goose": ".config/goose"}
LABELS = {"copilot": "GitHub Copilot CLI", "roo": "Roo Code", "warp": "Warp", "goose": "Goose"}
USER_JSON = {
    "mcpServers": {
        "playwright": {"type": "local", "command": "npx", "args": ["@playwright/mcp"]},
    },
    "theme": "dark",
}
# Goose's own config as it writes it, plus comments a user added by hand.
USER_YAML = """\
# my goose settings
GOOSE_PROVIDER: openai   # cheaper
GOOSE_MODEL: gpt-4o
extensions:
  developer:
    enabled: true
    type: builtin
    name: developer
    display_name: Developer
    timeout: 300
    bundled: true
  # a server of mine
  fetch:
    enabled: false
    type: stdio
    name: fetch
    cmd: uvx
    args:
    - mcp-server-fetch
    envs: {}
    timeout: 300
GOOSE_MODE: smart_approve
"""
ARGS = ["-P", "-m", "workbench", "mcp", "--platform"]


def user_text(agent: str) -> str:
    return USER_YAML if agent == "goose" else json.dumps(USER_JSON, indent=2) + "\n"


def read(agent: str, path: Path) -> Any:
    text = path.read_text("utf-8")
    return yaml.safe_load(text) if agent == "goose" else json.loads(text)


def ours(agent: str, path: Path) -> dict[str, Any]:
    data = read(agent, path)
    return dict(data["extensions" if agent == "goose" else "mcpServers"]["workbench"])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    for agent, name in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(user_text(agent), encoding="utf-8")
    return folder


@pytest.mark.parametrize("agent", sorted(FILES))
def test_install_adds_our_server_in_the_agents_format_and_uninstall_restores_the_bytes(
    agent: str, home: Path, data_dir: Path
) -> None:
    env = agent_env(home, data_dir)
    path = home / FILES[agent]
    before = path.read_bytes()
    proc = run_workbench(env, "install", "--agent", agent)
    assert proc.returncode == 0, proc.stderr
    assert f"{LABELS[agent]}: installed workbench MCP server in {path}" in proc.stdout
    entry = ours(agent, path)
    pinned = {"WORKBENCH_DATA_DIR": str(data_dir)}
    if agent == "goose":
        assert entry == {
            "enabled": True,
            "type": "stdio",
            "name": "workbench",
            "description": entry["description"],
            "cmd": sys.executable,
            "args": [*ARGS, "goose"],
            "envs": pinned,
            "env_keys": [],
            "timeout": 300,
            "bundled": None,
            "available_tools": [],
        }
        data = read(agent, path)
        assert {"developer", "fetch"} <= set(data["extensions"])
        assert data["GOOSE_MODE"] == "smart_approve"
        assert "GOOSE_PROVIDER: openai   # cheaper" in path.read_text("utf-8")
    else:
        extra = {"type": "local", "tools": ["*"]} if agent == "copilot" else {}
        assert entry == {
            **extra,
            "command": sys.executable,
            "args": [*ARGS, agent],
            "env": pinned,
        }
        data = read(agent, path)
        assert data["theme"] == "dark"
        assert data["mcpServers"]["playwright"] == USER_JSON["mcpServers"]["playwright"]
    (backup,) = backups(path)
    assert backup.read_bytes() == before
    row = doctor_rows(env)[f"agent {agent}"]
    assert row["status"] == "ok", row
    assert str(path) in row["detail"]

    again = run_workbench(env, "install", "--agent", agent)
    assert again.returncode == 0, again.stderr
    assert "workbench MCP server already in" in again.stdout
    assert len(backups(path)) == 1

    gone = run_workbench(env, "uninstall", "--agent", agent)
    assert gone.returncode == 0, gone.stderr
    assert f"{LABELS[agent]}: removed workbench MCP server from {path}" in gone.stdout
    assert path.read_bytes() == before
    row = doctor_rows(env)[f"agent {agent}"]
    assert row["status"] == "info", row
    assert "uninstalled" in row["detail"], row
    assert "nothing changed" in run_workbench(env, "uninstall", "--agent", agent).stdout


@pytest.mark.parametrize("agent", sorted(FILES))
def test_an_agent_not_on_this_machine_is_a_note_and_needs_force(
    agent: str, tmp_path: Path, data_dir: Path
) -> None:
    home = tmp_path / "empty-home"
    home.mkdir()
    env = agent_env(home, data_dir)
    row = doctor_rows(env)[f"agent {agent}"]
    assert row["status"] == "info", row
    assert "not found on this machine" in row["detail"], row
    proc = run_workbench(env, "install", "--agent", agent)
    assert proc.returncode == 1
    assert "--force" in proc.stderr
    assert "nothing was changed" in proc.stderr
    assert not (home / FILES[agent]).exists()
    forced = run_workbench(env, "install", "--agent", agent, "--force")
    assert forced.returncode == 0, forced.stderr
    assert ours(agent, home / FILES[agent])["args"][-1] == agent


@pytest.mark.parametrize("agent", sorted(FILES))
def test_a_foreign_workbench_entry_is_refused_untouched(
    agent: str, home: Path, data_dir: Path
) -> None:
    path = home / FILES[agent]
    if agent == "goose":
        path.write_text(
            USER_YAML.replace("extensions:\n", "extensions:\n  workbench:\n    cmd: other-tool\n"),
            encoding="utf-8",
        )
    else:
        foreign = {**USER_JSON, "mcpServers": {"workbench": {"command": "other-tool"}}}
        path.write_text(json.dumps(foreign, indent=2), encoding="utf-8")
    before = path.read_bytes()
    env = agent_env(home, data_dir)
    proc = run_workbench(env, "install", "--agent", agent)
    assert proc.returncode == 1
    assert "not workbench's" in proc.stderr
    assert "nothing was changed" in proc.stderr
    assert run_workbench(env, "uninstall", "--agent", agent).returncode == 0
    assert path.read_bytes() == before
    assert backups(path) == []


@pytest.mark.parametrize(
    ("agent", "text", "says"),
    [
        ("copilot", '{"mcpServers": {', "is not valid JSON"),
        ("roo", '{"mcpServers": []}', '"mcpServers" in'),
        ("warp", "[1, 2]", "must hold a JSON object"),
        ("goose", "extensions: [a, b]\n", '"extensions" in'),
        ("goose", "GOOSE_MODEL: [unclosed\n", "is not valid YAML"),
        ("goose", "- just\n- a list\n", "must hold a YAML mapping"),
    ],
)
def test_a_broken_config_is_refused_untouched_and_doctor_says_so(
    agent: str, text: str, says: str, home: Path, data_dir: Path
) -> None:
    path = home / FILES[agent]
    path.write_text(text, encoding="utf-8")
    env = agent_env(home, data_dir)
    for verb in ("install", "uninstall"):
        proc = run_workbench(env, verb, "--agent", agent)
        assert proc.returncode == 1, (verb, proc.stdout)
        assert says in proc.stderr, proc.stderr
        assert path.read_text("utf-8") == text
    row = doctor_rows(env)[f"agent {agent}"]
    assert row["status"] == "PROBLEM", row
    assert says in row["detail"], row


def test_goose_extensions_indented_by_four_and_written_empty(home: Path, data_dir: Path) -> None:
    """Goose writes ``extensions: {}`` on a fresh config; users indent by four."""
    path = home / FILES["goose"]
    env = agent_env(home, data_dir)
    four = (
        "extensions:\n    dev:\n        enabled: false\n        type: builtin\n        name: dev\n"
    )
    path.write_text(four, encoding="utf-8")
    assert run_workbench(env, "install", "--agent", "goose").returncode == 0
    assert "\nextensions:\n    workbench:\n" in "\n" + path.read_text("utf-8")
    assert set(read("goose", path)["extensions"]) == {"dev", "workbench"}
    assert run_workbench(env, "uninstall", "--agent", "goose").returncode == 0
    assert path.read_text("utf-8") == four

    path.write_text("extensions: {}\nGOOSE_MODEL: x\n", encoding="utf-8")
    assert run_workbench(env, "install", "--agent", "goose").returncode == 0
    assert set(read("goose", path)["extensions"]) == {"workbench"}
    assert run_workbench(env, "uninstall", "--agent", "goose").returncode == 0
    assert read("goose", path) == {"GOOSE_MODEL": "x"}  # the empty map goes with ours


@pytest.mark.parametrize("agent", ["copilot", "goose"])
def test_the_registered_command_starts_our_server(
    agent: str, home: Path, data_dir: Path, tmp_path: Path
) -> None:
    """Run exactly what the agent would run, in a project holding a ``workbench`` folder."""
    env = agent_env(home, data_dir)
    assert run_workbench(env, "install", "--agent", agent).returncode == 0
    entry = ours(agent, home / FILES[agent])
    if agent == "goose":
        entry = {"command": entry["cmd"], "args": entry["args"], "env": entry["envs"]}
    assert {"search", "get_observations", "save_memory"} <= tool_names(entry, tmp_path)


def test_the_real_copilot_cli_reads_our_entry_as_its_own_add_writes_it(
    home: Path, data_dir: Path, tmp_path: Path
) -> None:
    """GitHub Copilot CLI (npm ``@github/copilot``, ``tests/real_agents.py``): ``copilot mcp
    add`` in an empty HOME writes the very entry install writes, and ``copilot mcp list``
    reads ours back beside the user's server; after uninstall it is gone."""
    copilot = str(program("copilot"))
    env = agent_env(home, data_dir)
    assert run_workbench(env, "install", "--agent", "copilot").returncode == 0
    ours_entry = ours("copilot", home / FILES["copilot"])

    twin_home = tmp_path / "twin-home"
    twin_home.mkdir()
    added = subprocess.run(
        [copilot, "mcp", "add", "workbench", "--env", f"WORKBENCH_DATA_DIR={data_dir}", "--",
         ours_entry["command"], *ours_entry["args"]],
        env=agent_env(twin_home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert added.returncode == 0, added.stdout + added.stderr
    written = json.loads((twin_home / FILES["copilot"]).read_text("utf-8"))
    assert written["mcpServers"]["workbench"] == ours_entry

    def listed() -> dict[str, Any]:
        proc = subprocess.run(
            [copilot, "mcp", "list", "--json"], env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        servers: dict[str, Any] = json.loads(proc.stdout)["mcpServers"]
        return servers

    servers = listed()
    assert servers["workbench"]["enabled"] is True
    assert servers["workbench"]["command"] == sys.executable
    assert servers["workbench"]["args"] == [*ARGS, "copilot"]
    assert "playwright" in servers
    assert run_workbench(env, "uninstall", "--agent", "copilot").returncode == 0
    assert "workbench" not in listed()
