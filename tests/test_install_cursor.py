"""``workbench install|uninstall --agent cursor`` and ``doctor`` against real files, real CLI.

The CLI runs as a subprocess with HOME in tmp_path, so Cursor's files are
``<home>/.cursor/hooks.json`` (Cursor's schema: ``{"version": 1, "hooks": {event:
[{"command"}]}}``) and ``<home>/.cursor/mcp.json`` (``{"mcpServers": {...}}``). The commands
written are then run as Cursor runs them (``sh -c``), with the fixtures on stdin.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import agent_env, backups, doctor_rows, make_home, read_json
from tests.conftest import FIXTURES, run_workbench
from workbench import spool

# What a Cursor user may already have; every install and uninstall must keep it exactly.
USER_HOOKS = {
    "version": 1,
    "hooks": {
        "afterFileEdit": [{"command": "./hooks/format.sh"}],
        "beforeShellExecution": [{"command": "./hooks/block-git.sh"}],
        "stop": [{"command": "./hooks/audit.sh"}],
    },
}
USER_MCP = {"mcpServers": {"github": {"command": "github-mcp", "args": ["--stdio"]}}}
OURS = {
    "beforeSubmitPrompt": ["user_prompt_submit.py", "context_file.py"],
    "afterShellExecution": ["post_tool_use.py"],
    "afterMCPExecution": ["post_tool_use.py"],
    "afterFileEdit": ["post_tool_use.py"],
    "stop": ["stop.py", "context_file.py"],
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture
def env(home: Path, data_dir: Path) -> dict[str, str]:
    return agent_env(home, data_dir)


def hooks_file(home: Path) -> Path:
    return home / ".cursor" / "hooks.json"


def mcp_file(home: Path) -> Path:
    return home / ".cursor" / "mcp.json"


def ours(config: dict[str, Any]) -> dict[str, list[str]]:
    """event -> the script names of our entries, in order."""
    found: dict[str, list[str]] = {}
    for event, entries in config.get("hooks", {}).items():
        for entry in entries:
            command = entry["command"]
            if "/hooks/" in command and command.endswith("--platform cursor"):
                script = command.split("/hooks/", 1)[1].split()[0].strip("'")
                found.setdefault(event, []).append(script)
    return found


def user_files(home: Path) -> None:
    hooks_file(home).parent.mkdir(parents=True)
    hooks_file(home).write_text(json.dumps(USER_HOOKS), encoding="utf-8")
    mcp_file(home).write_text(json.dumps(USER_MCP), encoding="utf-8")


def test_install_merges_idempotently_with_backups_and_uninstall_removes_only_ours(
    home: Path, env: dict[str, str]
) -> None:
    user_files(home)
    first = run_workbench(env, "install", "--agent", "cursor")
    assert first.returncode == 0, first.stderr
    config = read_json(hooks_file(home))
    assert config["version"] == 1
    assert ours(config) == OURS
    for event, entries in USER_HOOKS["hooks"].items():  # the user's first, exactly, in order
        assert config["hooks"][event][: len(entries)] == entries
    assert all(set(entry) == {"command"} for e in config["hooks"].values() for entry in e)
    servers = read_json(mcp_file(home))["mcpServers"]
    assert servers["github"] == USER_MCP["mcpServers"]["github"]
    assert servers["workbench"]["args"][-5:] == ["-m", "workbench", "mcp", "--platform", "cursor"]
    assert [read_json(p) for p in backups(hooks_file(home))] == [USER_HOOKS]
    assert [read_json(p) for p in backups(mcp_file(home))] == [USER_MCP]
    assert "Cursor: installed workbench hooks" in first.stdout

    again = run_workbench(env, "install", "--agent", "cursor")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("nothing changed") == 2
    assert read_json(hooks_file(home)) == config
    assert len(backups(hooks_file(home))) == len(backups(mcp_file(home))) == 1

    gone = run_workbench(env, "uninstall", "--agent", "cursor")
    assert gone.returncode == 0, gone.stderr
    assert read_json(hooks_file(home)) == USER_HOOKS
    assert read_json(mcp_file(home)) == USER_MCP
    assert "nothing changed" in run_workbench(env, "uninstall", "--agent", "cursor").stdout


def test_a_fresh_install_writes_cursors_schema(home: Path, env: dict[str, str]) -> None:
    (home / ".cursor").mkdir()  # Cursor is on this machine, its files not yet written
    assert run_workbench(env, "install", "--agent", "cursor").returncode == 0
    config = read_json(hooks_file(home))
    assert list(config) == ["version", "hooks"]
    assert config["version"] == 1
    assert ours(config) == OURS
    assert backups(hooks_file(home)) == []


def test_the_installed_commands_run_the_cursor_adapter(
    home: Path, env: dict[str, str], data_dir: Path
) -> None:
    """Every command written, run as Cursor runs it, on that event's fixtures (service down)."""
    (home / ".cursor").mkdir()
    assert run_workbench(env, "install", "--agent", "cursor").returncode == 0
    config = read_json(hooks_file(home))
    fixtures = sorted((FIXTURES / "hooks" / "cursor").glob("*.json"))
    ran = 0
    for fixture in fixtures:
        event = read_json(fixture)["hook_event_name"]
        for entry in config["hooks"][event]:
            if "context_file" in entry["command"]:
                continue  # it starts the service (tests/test_hooks_cursor.py runs it)
            proc = subprocess.run(
                ["sh", "-c", entry["command"]],
                input=fixture.read_bytes(),
                env=env,
                capture_output=True,
                timeout=60,
            )
            assert proc.returncode == 0, proc.stderr
            assert proc.stderr == b""
            expected = {"continue": True} if event == "beforeSubmitPrompt" else {}
            assert json.loads(proc.stdout) == expected
            ran += 1
    assert ran == len(fixtures)  # each event's capture command
    envelopes = [
        spool.Envelope.from_json(path.read_text("utf-8"))
        for path in spool.pending(data_dir / "spool")
    ]
    assert sorted(e.path for e in envelopes) == [
        "/api/sessions/init",
        *["/api/sessions/observations"] * 4,
        "/api/sessions/summarize",
    ]
    (init,) = [e for e in envelopes if e.path == "/api/sessions/init"]
    assert init.body["platformSource"] == "cursor"


@pytest.mark.parametrize(
    ("broken", "words"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": 1, "hooks": []}', '"hooks"'),
        ('{"version": 1, "hooks": {"stop": {"command": "x"}}}', '"stop"'),
    ],
)
def test_a_broken_hooks_file_is_refused_and_nothing_is_written(
    broken: str, words: str, home: Path, env: dict[str, str]
) -> None:
    hooks_file(home).parent.mkdir(parents=True)
    hooks_file(home).write_text(broken, encoding="utf-8")
    result = run_workbench(env, "install", "--agent", "cursor")
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert str(hooks_file(home)) in message
    assert words in message
    assert "nothing was changed" in message
    assert hooks_file(home).read_text("utf-8") == broken
    assert not mcp_file(home).exists()
    assert backups(hooks_file(home)) == []


def test_a_foreign_workbench_mcp_server_is_refused_before_the_hooks_are_touched(
    home: Path, env: dict[str, str]
) -> None:
    user_files(home)
    foreign = {"mcpServers": {"workbench": {"command": "some-other-workbench"}}}
    mcp_file(home).write_text(json.dumps(foreign), encoding="utf-8")
    result = run_workbench(env, "install", "--agent", "cursor")
    assert result.returncode != 0
    assert "some-other-workbench" in result.stdout + result.stderr
    assert read_json(hooks_file(home)) == USER_HOOKS
    assert read_json(mcp_file(home)) == foreign


def test_all_installs_into_cursor_when_only_cursor_is_here(home: Path, env: dict[str, str]) -> None:
    (home / ".cursor").mkdir()
    result = run_workbench(env, "install", "--agent", "all")
    assert result.returncode == 0, result.stderr
    assert ours(read_json(hooks_file(home))) == OURS
    assert not (home / ".claude").exists()
    assert not (home / ".gemini").exists()


@pytest.mark.slow
def test_doctor_notes_cursor_until_installed_and_names_a_broken_file(
    home: Path, env: dict[str, str]
) -> None:
    absent = doctor_rows(env)["agent cursor"]
    assert absent["status"] == "info"
    assert "not found" in absent["detail"]
    (home / ".cursor").mkdir()
    present = doctor_rows(env)["agent cursor"]
    assert present["status"] == "info"
    assert "workbench install --agent cursor" in present["detail"]
    assert run_workbench(env, "install", "--agent", "cursor").returncode == 0
    installed = doctor_rows(env)["agent cursor"]
    assert installed["status"] == "ok"
    assert installed["detail"] == (
        f"hooks in {hooks_file(home)}; MCP server in {home / '.cursor' / 'mcp.json'}"
    )
    hooks_file(home).write_text("{broken", encoding="utf-8")
    broken = doctor_rows(env)["agent cursor"]
    assert broken["status"] == "PROBLEM"
    assert "not valid JSON" in broken["detail"]
