"""Gemini CLI and Codex CLI end to end through the commands ``workbench install`` wrote.

tests/test_hooks_platforms.py runs the hook scripts directly; here nothing is run that the
agent would not run: ``workbench install --agent gemini|codex`` writes the agent's file in a
temporary HOME, and each event's command is taken from that file and run with ``sh -c``, the
platform's fixture on stdin, in an environment with no ``WORKBENCH_*`` variable (agents do not
carry them: the data dir pinned in the command and its settings.json lead to the service).
A session goes prompt → observations → summary, and the next session's SessionStart gets the
memory in the platform's shape.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.agent_hooks import assert_carries_memory, db_rows, run_as_agent
from tests.conftest import run_workbench
from tests.test_hooks_platforms import NO_OPS, SESSION, SOURCE, load
from workbench import spool
from workbench.locate import SETTINGS_FILE

pytestmark = pytest.mark.slow

CONFIG = {"gemini": ".gemini/settings.json", "codex": ".codex/hooks.json"}


def installed_commands(home: Path, platform: str) -> dict[str, str]:
    """event -> the one workbench command ``install`` wrote for it."""
    config = json.loads((home / CONFIG[platform]).read_text("utf-8"))
    found = {}
    for event, groups in config["hooks"].items():
        (command,) = [h["command"] for g in groups for h in g["hooks"] if "/hooks/" in h["command"]]
        found[event] = command
    return found


@pytest.mark.parametrize("platform", sorted(SESSION))
def test_the_installed_commands_carry_a_session_to_the_next_sessions_context(
    platform: str, make_service: Any, data_dir: Path, tmp_path: Path
) -> None:
    svc = make_service(start=False)
    (data_dir / SETTINGS_FILE).write_text(json.dumps({"port": svc.port}), encoding="utf-8")
    svc.start()
    home = tmp_path / "home"
    (home / CONFIG[platform]).parent.mkdir(parents=True)
    cli_env = {k: v for k, v in svc.env.items() if not k.startswith(("CODEX_", "GEMINI_"))}
    cli_env["HOME"] = str(home)
    install = run_workbench(cli_env, "install", "--agent", platform)
    assert install.returncode == 0, install.stderr
    commands = installed_commands(home, platform)
    for command in commands.values():
        assert command.startswith(f"WORKBENCH_DATA_DIR={data_dir} ")
        assert command.endswith(f"--platform {platform}")
    agent_env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    agent_env["HOME"] = str(home)

    def fire(payload: dict[str, Any]) -> dict[str, Any]:
        return run_as_agent(["sh", "-c", commands[payload["hook_event_name"]]], payload, agent_env)

    start = load(platform, "session_start")
    before = json.dumps(fire(start))
    for name in SESSION[platform]:
        assert fire(load(platform, name)) == {}
    for name in NO_OPS[platform]:
        assert fire(load(platform, name)) == {}
    svc.wait_idle()

    session_id = start["session_id"]
    (session,) = db_rows(svc, "SELECT * FROM sessions WHERE content_session_id = ?", session_id)
    assert session["platform_source"] == SOURCE[platform]
    (prompt,) = db_rows(svc, "SELECT * FROM user_prompts WHERE content_session_id = ?", session_id)
    assert prompt["prompt_text"] == load(platform, SESSION[platform][0])["prompt"]
    observations = db_rows(
        svc, "SELECT * FROM observations WHERE content_session_id = ?", session_id
    )
    assert len(observations) >= 2
    assert {o["platform_source"] for o in observations} == {SOURCE[platform]}
    (summary,) = db_rows(
        svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", session_id
    )
    assert summary["request"]

    output = fire({**start, "session_id": session_id + "-next"})
    assert_carries_memory(output, before, [o["title"] for o in observations])
    assert spool.pending(data_dir / "spool") == []  # all delivered, nothing left behind
