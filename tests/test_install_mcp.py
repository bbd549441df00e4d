"""``workbench install`` / ``uninstall`` and Claude Code's user-scope MCP registration.

Claude Code keeps user-scope MCP servers in ``.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json``
when set, else ``~/.claude.json``) under the top-level ``mcpServers``. That file is also
Claude Code's own state, so the tests check that everything else in it survives exactly, and
finally that the registered command really starts our MCP server from a user's project.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_workbench
from tests.mcp_stdio import tool_names
from tests.test_install import USER_SETTINGS

CLAUDE_STATE = {
    "numStartups": 42,
    "oauthAccount": {"emailAddress": "zoë@example.com"},
    "mcpServers": {
        "github": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_TOKEN": "ghp_example"},
        }
    },
    "projects": {"/home/u/app": {"mcpServers": {"local-db": {"command": "db-mcp"}}}},
}


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "claude"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    state = folder / ".claude.json"
    state.write_text(json.dumps(CLAUDE_STATE, ensure_ascii=False), encoding="utf-8")
    state.chmod(0o600)
    return folder


@pytest.fixture
def env(config_dir: Path, data_dir: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    return {**clean, "CLAUDE_CONFIG_DIR": str(config_dir), "WORKBENCH_DATA_DIR": str(data_dir)}


def state(config_dir: Path) -> dict[str, Any]:
    return json.loads((config_dir / ".claude.json").read_text(encoding="utf-8"))


def test_install_registers_the_server_and_keeps_claude_state(
    config_dir: Path, env: dict[str, str], data_dir: Path
) -> None:
    proc = run_workbench(env, "install")
    assert proc.returncode == 0, proc.stderr
    assert "installed workbench MCP server in" in proc.stdout
    after = state(config_dir)
    ours = after["mcpServers"].pop("workbench")
    assert ours == {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-P", "-m", "workbench", "mcp"],
        "env": {"WORKBENCH_DATA_DIR": str(data_dir)},
    }
    assert after == CLAUDE_STATE  # everything else exactly as it was
    assert stat.S_IMODE((config_dir / ".claude.json").stat().st_mode) == 0o600
    [backup] = config_dir.glob(".claude.json.workbench-backup-*")
    assert json.loads(backup.read_text(encoding="utf-8")) == CLAUDE_STATE
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600


def test_install_is_idempotent_and_uninstall_removes_only_ours(
    config_dir: Path, env: dict[str, str]
) -> None:
    assert run_workbench(env, "install").returncode == 0
    first = (config_dir / ".claude.json").read_bytes()
    again = run_workbench(env, "install")
    assert again.returncode == 0
    assert "workbench MCP server already in" in again.stdout
    assert (config_dir / ".claude.json").read_bytes() == first
    assert len(list(config_dir.glob(".claude.json.workbench-backup-*"))) == 1

    proc = run_workbench(env, "uninstall")
    assert proc.returncode == 0, proc.stderr
    assert "removed workbench MCP server from" in proc.stdout
    assert state(config_dir) == CLAUDE_STATE
    assert json.loads((config_dir / "settings.json").read_text()) == USER_SETTINGS
    assert "nothing changed" in run_workbench(env, "uninstall").stdout


def test_a_foreign_server_named_workbench_is_never_overwritten(
    config_dir: Path, env: dict[str, str]
) -> None:
    foreign = {**CLAUDE_STATE, "mcpServers": {"workbench": {"command": "other-tool"}}}
    (config_dir / ".claude.json").write_text(json.dumps(foreign), encoding="utf-8")
    proc = run_workbench(env, "install")
    assert proc.returncode == 1
    assert "not workbench's" in proc.stderr
    assert "nothing was changed" in proc.stderr
    assert state(config_dir) == foreign
    # Checked before the hooks were written: no half-done install.
    assert json.loads((config_dir / "settings.json").read_text()) == USER_SETTINGS
    assert run_workbench(env, "uninstall").returncode == 0
    assert state(config_dir) == foreign


def test_a_corrupt_claude_json_is_refused_untouched(config_dir: Path, env: dict[str, str]) -> None:
    (config_dir / ".claude.json").write_text("{oops", encoding="utf-8")
    proc = run_workbench(env, "install")
    assert proc.returncode == 1
    assert "not valid JSON" in proc.stderr
    assert (config_dir / ".claude.json").read_text() == "{oops"
    assert json.loads((config_dir / "settings.json").read_text()) == USER_SETTINGS


def test_without_claude_config_dir_it_is_home_claude_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    clean.pop("CLAUDE_CONFIG_DIR", None)
    proc = run_workbench({**clean, "HOME": str(home)}, "install")
    assert proc.returncode == 0, proc.stderr
    registered = json.loads((home / ".claude.json").read_text())["mcpServers"]["workbench"]
    assert registered["env"] == {}  # no data dir given: the server resolves it like the CLI
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600
    assert (home / ".claude" / "settings.json").is_file()  # the hooks' file, beside it
    assert not (home / ".claude" / ".claude.json").exists()


def test_the_registered_command_starts_the_server_from_a_users_project(
    config_dir: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Run exactly what Claude Code would run, in a project holding a ``workbench`` folder."""
    assert run_workbench(env, "install").returncode == 0
    entry = state(config_dir)["mcpServers"]["workbench"]
    assert {"search", "get_observations", "workflow"} <= tool_names(entry, tmp_path)
