"""Five defects a review found in ``install | uninstall | doctor``, each against real files.

The CLI runs as a subprocess with HOME in tmp_path (``tests.agent_home``). Each test is the
reviewer's reproduction: a user's own hook in a ``hooks/`` folder, ``--agent all`` with one
agent that refuses, a config that is not UTF-8, an MCP file of the wrong shape found after
the hooks were removed, and an uninstall from a file with none of ours.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_home import agent_env, backups, doctor_rows, make_home, read_json
from tests.conftest import run_workbench
from workbench.agents.claude_settings import HOOKS_DIR


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture
def env(home: Path, data_dir: Path) -> dict[str, str]:
    return agent_env(home, data_dir)


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), "utf-8")


def cli(env: dict[str, str], *args: str) -> tuple[int, str]:
    proc = run_workbench(env, *args)
    return proc.returncode, proc.stdout + proc.stderr


# ----- 1. ours recognised by the shape hook_command writes, not by a script name -------------

USER_CURSOR_HOOKS = {
    "version": 1,
    "hooks": {
        "stop": [{"command": "python3 ~/.cursor/hooks/stop.py"}],
        "afterFileEdit": [{"command": "./hooks/post_tool_use.py --lint"}],
    },
}


def test_cursor_user_scripts_in_a_hooks_folder_survive_install_and_uninstall(
    home: Path, env: dict[str, str]
) -> None:
    hooks = home / ".cursor" / "hooks.json"
    write_json(hooks, USER_CURSOR_HOOKS)
    assert cli(env, "install", "--agent", "cursor")[0] == 0
    installed = read_json(hooks)["hooks"]
    assert installed["stop"][0] == {"command": "python3 ~/.cursor/hooks/stop.py"}
    assert installed["afterFileEdit"][0] == {"command": "./hooks/post_tool_use.py --lint"}
    assert cli(env, "uninstall", "--agent", "cursor")[0] == 0
    assert read_json(hooks) == USER_CURSOR_HOOKS


def test_claude_user_script_named_like_ours_survives_uninstall(
    home: Path, env: dict[str, str]
) -> None:
    settings = home / ".claude" / "settings.json"
    user = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "bash ~/.claude/hooks/stop.py"}]}]
        }
    }
    write_json(settings, user)
    code, out = cli(env, "uninstall", "--agent", "claude")
    assert code == 0, out
    assert read_json(settings) == user
    assert backups(settings) == []


def test_doctor_does_not_call_a_user_script_our_stale_hook(home: Path, env: dict[str, str]) -> None:
    write_json(home / ".cursor" / "hooks.json", USER_CURSOR_HOOKS)
    row = doctor_rows(env)["agent cursor"]
    assert row["status"] == "info", row


def test_moved_checkout_is_replaced_not_doubled(home: Path, env: dict[str, str]) -> None:
    """Ours from another checkout, quoted path and pinned data dir, is still recognised."""
    hooks = home / ".cursor" / "hooks.json"
    old = (
        "WORKBENCH_DATA_DIR='/old data' /old/venv/bin/python -S '/old place/hooks/stop.py' "
        "--platform cursor"
    )
    write_json(hooks, {"version": 1, "hooks": {"stop": [{"command": old}]}})
    assert cli(env, "install", "--agent", "cursor")[0] == 0
    stop = [e["command"] for e in read_json(hooks)["hooks"]["stop"]]
    assert old not in stop
    assert len(stop) == 2
    assert all(str(HOOKS_DIR) in c for c in stop)


# ----- 2. --agent all: every agent is checked before any is written --------------------------


@pytest.mark.parametrize(
    ("agent", "path", "content"),
    [
        ("cursor", ".cursor/hooks.json", {"hooks": []}),
        ("cursor", ".cursor/mcp.json", {"mcpServers": []}),
        ("windsurf", ".codeium/windsurf/hooks.json", {"hooks": []}),
        ("windsurf", ".codeium/windsurf/mcp_config.json", {"mcpServers": []}),
        ("opencode", ".config/opencode/opencode.json", {"mcp": []}),
        ("opencode", ".config/opencode/plugins/workbench.js", None),
    ],
)
def test_install_all_writes_nothing_when_one_agent_refuses(
    home: Path, env: dict[str, str], agent: str, path: str, content: object
) -> None:
    for folder in (
        ".claude",
        ".gemini",
        ".codex",
        ".cursor",
        ".codeium/windsurf",
        ".config/opencode",
    ):
        (home / folder).mkdir(parents=True, exist_ok=True)
    target = home / path
    if content is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("export default {}\n", "utf-8")  # a user's plugin, not ours
    else:
        write_json(target, content)
    before = sorted(p for p in home.rglob("*") if p.is_file())
    code, out = cli(env, "install", "--agent", "all")
    assert code != 0, out
    assert "nothing was changed" in out, out
    assert sorted(p for p in home.rglob("*") if p.is_file()) == before


# ----- 3. a config that is not UTF-8 is refused, and doctor never crashes ---------------------


def test_install_refuses_mcp_file_that_is_not_utf8(home: Path, env: dict[str, str]) -> None:
    mcp = home / ".cursor" / "mcp.json"
    mcp.parent.mkdir(parents=True)
    mcp.write_bytes(b'{"mcpServers": {"x": {"command": "caf\xe9"}}}')
    code, out = cli(env, "install", "--agent", "cursor")
    assert code != 0, out
    assert "Traceback" not in out, out
    assert str(mcp) in out
    assert "UTF-8" in out
    assert not (home / ".cursor" / "hooks.json").exists()


def test_doctor_reports_a_file_that_is_not_utf8_as_that_agents_problem(
    home: Path, env: dict[str, str]
) -> None:
    mcp = home / ".cursor" / "mcp.json"
    mcp.parent.mkdir(parents=True)
    mcp.write_bytes(b'{"mcpServers": {"x": {"command": "caf\xe9"}}}')
    oc = home / ".config" / "opencode" / "opencode.json"
    oc.parent.mkdir(parents=True)
    oc.write_bytes(b'{"theme": "caf\xe9"}')
    rows = doctor_rows(env)
    assert rows["agent cursor"]["status"] == "PROBLEM"
    assert str(mcp) in rows["agent cursor"]["detail"]
    assert rows["agent opencode"]["status"] == "PROBLEM"
    assert str(oc) in rows["agent opencode"]["detail"]


def test_opencode_install_refuses_config_that_is_not_utf8(home: Path, env: dict[str, str]) -> None:
    oc = home / ".config" / "opencode" / "opencode.json"
    oc.parent.mkdir(parents=True)
    oc.write_bytes(b'{"theme": "caf\xe9"}')
    code, out = cli(env, "install", "--agent", "opencode")
    assert code != 0, out
    assert "Traceback" not in out, out
    assert str(oc) in out, out
    assert not (home / ".config" / "opencode" / "plugins").exists()


def test_doctor_reports_opencode_plugin_config_line_not_an_object(
    home: Path, env: dict[str, str]
) -> None:
    (home / ".config" / "opencode").mkdir(parents=True)  # OpenCode is on this machine
    assert cli(env, "install", "--agent", "opencode")[0] == 0
    plugin = home / ".config" / "opencode" / "plugins" / "workbench.js"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text("const CONFIG = /* workbench:config */ [1, 2];\n", "utf-8")
    row = doctor_rows(env)["agent opencode"]
    assert row["status"] == "PROBLEM", row
    assert str(plugin) in row["detail"], row


# ----- 4. uninstall checks every file before writing any --------------------------------------


@pytest.mark.parametrize(
    ("agent", "path", "broken"),
    [
        ("cursor", ".cursor/mcp.json", '{"mcpServers": []}'),
        ("windsurf", ".codeium/windsurf/mcp_config.json", '{"mcpServers": []}'),
        ("codex", ".codex/config.toml", "mcp_servers = 5\n"),
        ("claude", ".claude.json", '{"mcpServers": []}'),
    ],
)
def test_uninstall_refuses_before_writing_any_file(
    home: Path, env: dict[str, str], agent: str, path: str, broken: str
) -> None:
    for folder in (".claude", ".codex", ".cursor", ".codeium/windsurf"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    assert cli(env, "install", "--agent", agent)[0] == 0
    (home / path).write_text(broken, "utf-8")
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    code, out = cli(env, "uninstall", "--agent", agent)
    assert code != 0, out
    assert "nothing was changed" in out, out
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before


def test_uninstall_all_checks_every_agent_first(home: Path, env: dict[str, str]) -> None:
    for folder in (".claude", ".cursor"):
        (home / folder).mkdir()
    assert cli(env, "install", "--agent", "all")[0] == 0
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": []}', "utf-8")
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    code, out = cli(env, "uninstall", "--agent", "all")
    assert code != 0, out
    assert "nothing was changed" in out, out
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before


# ----- 5. uninstall leaves a file with none of ours alone -------------------------------------


@pytest.mark.parametrize(
    ("agent", "path", "content"),
    [
        ("gemini", ".gemini/settings.json", {"theme": "x", "hooks": {"AfterTool": []}}),
        ("claude", ".claude/settings.json", {"hooks": {}}),
        ("codex", ".codex/hooks.json", {"hooks": {"Stop": [{"hooks": []}]}}),
    ],
)
def test_uninstall_leaves_a_file_without_ours_untouched(
    home: Path, env: dict[str, str], agent: str, path: str, content: object
) -> None:
    target = home / path
    write_json(target, content)
    raw = target.read_bytes()
    code, out = cli(env, "uninstall", "--agent", agent)
    assert code == 0, out
    assert target.read_bytes() == raw
    assert backups(target) == []
    assert "removed workbench hooks" not in out


# ----- 3b. JSON nested too deeply for the parser: refused like any file that is not JSON ------


@pytest.mark.parametrize(
    ("agent", "path"),
    [
        ("cursor", ".cursor/mcp.json"),
        ("cursor", ".cursor/hooks.json"),
        ("gemini", ".gemini/settings.json"),
        ("opencode", ".config/opencode/opencode.json"),
    ],
)
def test_json_nested_too_deeply_is_refused_and_a_doctor_problem(
    home: Path, env: dict[str, str], agent: str, path: str
) -> None:
    target = home / path
    target.parent.mkdir(parents=True)
    target.write_text("[" * 100_000, "utf-8")
    code, out = cli(env, "install", "--agent", agent)
    assert code != 0, out
    assert "Traceback" not in out, out
    assert str(target) in out, out
    assert sorted(p for p in home.rglob("*") if p.is_file()) == [target]
    row = doctor_rows(env)[f"agent {agent}"]
    assert row["status"] == "PROBLEM", row
    assert str(target) in row["detail"], row
