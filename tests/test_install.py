"""``workbench install`` / ``uninstall`` against a real Claude Code settings file.

Runs the real CLI as a subprocess with CLAUDE_CONFIG_DIR pointing into tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_workbench

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def run_cli(args: list[str], config_dir: Path, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update(CLAUDE_CONFIG_DIR=str(config_dir), WORKBENCH_DATA_DIR=str(data_dir))
    return run_workbench(env, *args)


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "claude"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    return folder


def ours(settings: dict) -> list[str]:
    return [
        h["command"]
        for groups in settings.get("hooks", {}).values()
        for g in groups
        for h in g["hooks"]
        if "hooks/" in h["command"] and ".py" in h["command"]
    ]


def test_install_merges_keeps_user_hooks_and_backs_up(config_dir: Path, data_dir: Path) -> None:
    proc = run_cli(["install"], config_dir, data_dir)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads((config_dir / "settings.json").read_text())
    assert settings["model"] == "opus"
    assert settings["permissions"] == USER_SETTINGS["permissions"]
    assert settings["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    post = settings["hooks"]["PostToolUse"]
    assert post[0] == USER_SETTINGS["hooks"]["PostToolUse"][0]
    assert post[1]["matcher"] == "*"
    assert {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"} <= set(
        settings["hooks"]
    )
    assert "matcher" not in settings["hooks"]["Stop"][0]
    commands = ours(settings)
    # SessionStart, UserPromptSubmit, PreToolUse (matcher Read), PostToolUse, Stop, SessionEnd
    assert len(commands) == 6
    (read_hook,) = settings["hooks"]["PreToolUse"]
    assert read_hook["matcher"] == "Read"
    assert read_hook["hooks"][0]["command"].endswith("/hooks/pre_tool_use_read.py")
    for command in commands:
        # The data dir in effect at install time is pinned, since Claude Code's environment
        # may not carry WORKBENCH_DATA_DIR.
        assert command.startswith(f"WORKBENCH_DATA_DIR={data_dir} {sys.executable} -S ")
        script = command.split()[-1]
        assert Path(script).is_file()
    backups = list(config_dir.glob("settings.json.workbench-backup-*"))
    assert len(backups) == 1
    assert json.loads(backups[0].read_text()) == USER_SETTINGS


def test_install_is_idempotent(config_dir: Path, data_dir: Path) -> None:
    assert run_cli(["install"], config_dir, data_dir).returncode == 0
    first = (config_dir / "settings.json").read_text()
    proc = run_cli(["install"], config_dir, data_dir)
    assert proc.returncode == 0
    assert "nothing changed" in proc.stdout
    assert (config_dir / "settings.json").read_text() == first
    assert len(list(config_dir.glob("settings.json.workbench-backup-*"))) == 1


def test_uninstall_removes_only_ours(config_dir: Path, data_dir: Path) -> None:
    assert run_cli(["install"], config_dir, data_dir).returncode == 0
    assert run_cli(["uninstall"], config_dir, data_dir).returncode == 0
    assert json.loads((config_dir / "settings.json").read_text()) == USER_SETTINGS
    again = run_cli(["uninstall"], config_dir, data_dir)
    assert again.returncode == 0
    assert "nothing changed" in again.stdout


def test_install_refuses_a_corrupt_settings_file(config_dir: Path, data_dir: Path) -> None:
    (config_dir / "settings.json").write_text("{not json", encoding="utf-8")
    proc = run_cli(["install"], config_dir, data_dir)
    assert proc.returncode == 1
    assert "not valid JSON" in proc.stderr
    assert "nothing was changed" in proc.stderr
    assert (config_dir / "settings.json").read_text() == "{not json"


def test_install_into_missing_config_dir(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "fresh-claude"
    assert run_cli(["install"], folder, data_dir).returncode == 0
    assert len(ours(json.loads((folder / "settings.json").read_text()))) == 6
