"""``workbench plugin build``: a Claude Code plugin that the real Claude Code validates and runs.

The plugin's hooks and MCP server are exactly what ``workbench install`` merges into the
settings files (same commands, same pinned data dir). The real Claude Code from npm
(``tests/real_agents.py``) then: validates the plugin and its marketplace with ``claude plugin
validate --strict``; installs it from the marketplace (``claude plugin marketplace add`` +
``claude plugin install``) and lists it enabled with our MCP server; and runs a session with
``--plugin-dir`` against a fake model server, whose SessionStart, PostToolUse and Stop hooks
reach the store: the plugin is loaded and works, with no settings-file install at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import agent_env, doctor_rows, make_home, read_json
from tests.claude_script import claude_rule
from tests.conftest import run_workbench
from tests.fake_anthropic import FakeAnthropic
from tests.real_agents import program
from tests.real_world import open_world

pytestmark = pytest.mark.slow

EVENTS = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}


def build(env: dict[str, str], out: Path, *extra: str) -> None:
    proc = run_workbench(env, "plugin", "build", str(out), *extra)
    assert proc.returncode == 0, proc.stderr
    assert f"claude --plugin-dir {out / 'workbench'}" in proc.stdout


def claude(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(program("claude")), *argv], env=env, capture_output=True, text=True, timeout=120
    )


def test_the_plugin_holds_what_install_writes(tmp_path: Path, data_dir: Path) -> None:
    home = make_home(tmp_path)
    env = agent_env(home, data_dir)
    build(env, tmp_path / "out")
    plugin = tmp_path / "out" / "workbench"
    assert run_workbench(env, "install").returncode == 0
    settings = read_json(home / ".claude" / "settings.json")
    assert read_json(plugin / "hooks" / "hooks.json")["hooks"] == settings["hooks"]
    server = read_json(home / ".claude.json")["mcpServers"]["workbench"]
    assert read_json(plugin / ".mcp.json") == {"mcpServers": {"workbench": server}}
    assert server["command"] == sys.executable
    assert server["env"] == {"WORKBENCH_DATA_DIR": str(data_dir)}
    manifest = read_json(plugin / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "workbench"
    market = read_json(tmp_path / "out" / ".claude-plugin" / "marketplace.json")
    assert market["plugins"][0]["source"] == "./workbench"


def test_the_real_claude_code_validates_installs_and_lists_the_plugin(
    tmp_path: Path, data_dir: Path
) -> None:
    home = make_home(tmp_path)
    env = agent_env(home, data_dir)
    out = tmp_path / "out"
    build(env, out)
    for target in (out, out / "workbench"):
        proc = claude(env, "plugin", "validate", "--strict", "--json", str(target))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report: dict[str, Any] = json.loads(proc.stdout)
        assert report["success"] is True, report
    provides = json.loads(
        claude(env, "plugin", "validate", "--json", str(out / "workbench")).stdout
    )["provides"]
    assert {hook["event"] for hook in provides["hooks"]} == EVENTS

    assert claude(env, "plugin", "marketplace", "add", str(out)).returncode == 0
    installed = claude(env, "plugin", "install", "workbench@workbench-local")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = json.loads(claude(env, "plugin", "list", "--json").stdout)
    (ours,) = [p for p in listed if p["id"] == "workbench@workbench-local"]
    assert ours["enabled"] is True
    assert ours["mcpServers"]["workbench"]["command"] == sys.executable
    # The plugin route leaves the settings-file install alone: no hooks of ours there.
    assert "hooks" not in read_json(home / ".claude" / "settings.json")
    row = doctor_rows(env)["agent claude"]
    assert row["status"] == "ok", row
    assert "as the Claude Code plugin workbench@workbench-local" in row["detail"]
    # Both routes at once: every hook would run twice, a problem that names the fix.
    assert run_workbench(env, "install").returncode == 0
    row = doctor_rows(env)["agent claude"]
    assert row["status"] == "PROBLEM", row
    assert "runs twice" in row["detail"]
    assert "workbench uninstall" in row["detail"]


def test_a_session_with_the_plugin_dir_runs_our_hooks_into_the_store(tmp_path: Path) -> None:
    (tmp_path / "world").mkdir()
    with open_world(tmp_path / "world") as world, FakeAnthropic() as fake:
        out = tmp_path / "plugin-out"
        build(world.env, out)
        (world.project / "notes.md").write_text("The frobnicator is 42 mm.\n", "utf-8")
        world.service.start(timeout=60)
        fake.answer_by(claude_rule)
        proc = world.run(
            [
                str(program("claude")),
                "-p",
                f"READ {world.project / 'notes.md'}",
                "--plugin-dir",
                str(out / "workbench"),
            ],
            timeout=180,
            ANTHROPIC_BASE_URL=fake.base_url,
            ANTHROPIC_API_KEY="sk-test",
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        world.service.wait_idle(timeout=60)
        kinds = {row["kind"] for row in world.rows("SELECT kind FROM events")}
        settings = world.home / ".claude" / "settings.json"
        assert not settings.exists() or "hooks" not in read_json(settings)  # the plugin's only
        assert {"session_init", "observation", "summarize"} <= kinds, kinds
