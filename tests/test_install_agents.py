"""``workbench install|uninstall --agent gemini|codex`` against real config files, real CLI.

The CLI runs as a subprocess with HOME (Gemini CLI's ``~/.gemini``) and CODEX_HOME pointing
into tmp_path. The command written for each event is then run as the agent would run it
(``sh -c``), with that platform's fixture on stdin and the service down: it must exit 0,
print one JSON object and spool the event with the platform's ``platformSource``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, free_port, run_workbench
from workbench import spool

# The user's own settings, which every install and uninstall must keep exactly.
USER = {
    "gemini": {
        "theme": "GitHub",
        "hooks": {
            "enabled": True,
            "AfterTool": [
                {"matcher": "write_file", "hooks": [{"type": "command", "command": "prettier"}]}
            ],
        },
    },
    "codex": {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
        }
    },
}
EVENTS = {
    "gemini": {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"},
    "codex": {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"},
}
SOURCE = {"gemini": "gemini-cli", "codex": "codex-cli"}
# The prompt event of each agent and its fixture: it carries platformSource.
PROBE = {
    "gemini": ("BeforeAgent", "before_agent"),
    "codex": ("UserPromptSubmit", "user_prompt_submit"),
}


def config_file(home: Path, agent: str) -> Path:
    return (
        home / ".gemini" / "settings.json" if agent == "gemini" else home / "codex" / "hooks.json"
    )


def env_for(home: Path, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "CODEX_"))}
    env.update(
        HOME=str(home),
        CODEX_HOME=str(home / "codex"),
        WORKBENCH_DATA_DIR=str(data_dir),
        WORKBENCH_PORT=str(free_port()),  # nothing listens: the service is down
    )
    return env


def ours(config: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for event, groups in config.get("hooks", {}).items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            for hook in group["hooks"]:
                if "/hooks/" in hook["command"]:
                    found.setdefault(event, []).append({**hook, "group": group})
    return found


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("agent", ["gemini", "codex"])
def test_install_merges_idempotently_keeps_the_users_entries_and_uninstall_removes_ours(
    agent: str, home: Path, data_dir: Path
) -> None:
    path = config_file(home, agent)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(USER[agent]), encoding="utf-8")
    env = env_for(home, data_dir)

    first = run_workbench(env, "install", "--agent", agent)
    assert first.returncode == 0, first.stderr
    config = json.loads(path.read_text("utf-8"))
    mine = ours(config)
    assert set(mine) == EVENTS[agent]
    for (hook,) in mine.values():
        assert hook["command"].endswith(f"--platform {agent}"), hook
        assert "matcher" not in hook["group"]
    if agent == "gemini":
        assert {h["timeout"] for (h,) in mine.values()} == {30_000, 10_000}  # milliseconds
        assert mine["SessionStart"][0]["timeout"] == 30_000
    else:
        assert {h["timeout"] for (h,) in mine.values()} == {30, 10, 3}  # seconds; SessionEnd 3
    backups = list(path.parent.glob(f"{path.name}.workbench-backup-*"))
    assert len(backups) == 1
    assert json.loads(backups[0].read_text("utf-8")) == USER[agent]

    again = run_workbench(env, "install", "--agent", agent)
    assert again.returncode == 0, again.stderr
    assert "nothing changed" in again.stdout
    assert json.loads(path.read_text("utf-8")) == config
    assert len(list(path.parent.glob(f"{path.name}.workbench-backup-*"))) == 1

    gone = run_workbench(env, "uninstall", "--agent", agent)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(path.read_text("utf-8")) == USER[agent]


@pytest.mark.parametrize("agent", ["gemini", "codex"])
def test_the_installed_command_runs_the_platforms_adapter(
    agent: str, home: Path, data_dir: Path
) -> None:
    env = env_for(home, data_dir)
    config_file(home, agent).parent.mkdir(parents=True)  # the agent is on this machine
    assert run_workbench(env, "install", "--agent", agent).returncode == 0
    event, fixture = PROBE[agent]
    ((hook,),) = [ours(json.loads(config_file(home, agent).read_text("utf-8")))[event]]
    payload = (FIXTURES / "hooks" / agent / f"{fixture}.json").read_bytes()
    proc = subprocess.run(
        ["sh", "-c", hook["command"]], input=payload, env=env, capture_output=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {}
    (path,) = spool.pending(data_dir / "spool")
    envelope = spool.Envelope.from_json(path.read_text("utf-8"))
    assert envelope.path == "/api/sessions/init"
    assert envelope.body["platformSource"] == SOURCE[agent]


def test_an_unknown_agent_is_refused_with_the_known_ones(home: Path, data_dir: Path) -> None:
    result = run_workbench(env_for(home, data_dir), "install", "--agent", "notepad")
    assert result.returncode != 0
    assert "claude, gemini, codex, cursor" in result.stdout + result.stderr
    assert list(home.iterdir()) == []
