"""``team_publish_on_stop`` publishes when a session ends, with an idle safety net.

Real parts: the session's PostgreSQL as the catalog, the real service (``make_service``), the
real Claude Code and Codex CLI hook scripts as subprocesses fed their fixtures, and the lake
read back with DuckDB. No timing is asserted: "nothing published yet" is checked with an idle
delay of an hour, and the safety net with one of a second, waited for (not timed).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent_hooks import db_rows, run_as_agent
from tests.conftest import FIXTURES, HOOKS_DIR
from tests.test_team_publish_on_stop import run_env, run_session, team_env, wait_for_publish

pytestmark = pytest.mark.slow

CLAUDE_SESSION = ["session_start_startup", "user_prompt_submit", "post_tool_use_edit", "stop"]


def claude(name: str, env: dict[str, str]) -> dict[str, Any]:
    payload = json.loads((FIXTURES / "hooks" / f"{name}.json").read_text("utf-8"))
    script = {
        "SessionStart": "session_start",
        "UserPromptSubmit": "user_prompt_submit",
        "PostToolUse": "post_tool_use",
        "Stop": "stop",
        "SessionEnd": "session_end",
    }[payload["hook_event_name"]]
    run_as_agent([sys.executable, str(HOOKS_DIR / f"{script}.py")], payload, env)
    return payload


def test_a_session_is_published_once_when_it_ends(
    team_lake: Any, make_service: Any, tmp_path: Path
) -> None:
    svc = make_service(
        **team_env(
            team_lake, WORKBENCH_TEAM_PUBLISH_ON_STOP="1", WORKBENCH_TEAM_PUBLISH_IDLE_S="3600"
        )
    )
    for name in CLAUDE_SESSION:
        session_id = claude(name, svc.env)["session_id"]
    svc.wait_idle()
    summary = db_rows(
        svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", session_id
    )
    assert len(summary) == 1
    assert not (svc.data_dir / "team_publish.json").exists()  # the Stop alone publishes nothing

    claude("session_end", svc.env)
    entry = wait_for_publish(svc.data_dir)

    assert entry["error"] is None, entry
    assert entry["trigger"] == "session end"
    assert entry["snapshot"] is not None
    lake_summaries = team_lake.query(
        tmp_path,
        "SELECT request FROM lake.summaries WHERE author = 'ana' AND content_session_id = ?",
        [session_id],
    )
    assert lake_summaries == [(summary[0]["request"],)]
    local = db_rows(svc, "SELECT title FROM observations WHERE content_session_id = ?", session_id)
    published = team_lake.query(
        tmp_path,
        "SELECT title FROM lake.observations WHERE content_session_id = ? ORDER BY 1",
        [session_id],
    )
    assert local
    assert sorted(r["title"] for r in local) == [t for (t,) in published]
    status = team_lake.query(
        tmp_path,
        "SELECT status FROM lake.sessions WHERE content_session_id = ?"
        " ORDER BY published_at_epoch DESC LIMIT 1",
        [session_id],
    )
    assert status == [("completed",)]  # published after the session was marked ended
    snapshots = team_lake.query(
        tmp_path, "SELECT count(*) FROM lake.snapshots() WHERE commit_message LIKE 'publish %'"
    )
    assert snapshots == [(1,)]


def test_a_session_that_never_ends_is_published_after_the_idle_delay(
    team_lake: Any, make_service: Any, tmp_path: Path
) -> None:
    """Codex CLI sends no SessionEnd: the idle safety net publishes its Stop's summary."""
    svc = make_service(
        **team_env(team_lake, WORKBENCH_TEAM_PUBLISH_ON_STOP="1", WORKBENCH_TEAM_PUBLISH_IDLE_S="1")
    )

    session_id = run_session(svc)
    entry = wait_for_publish(svc.data_dir)

    assert entry["error"] is None, entry
    assert entry["trigger"] == "stop hook"
    summaries = team_lake.query(
        tmp_path, "SELECT count(*) FROM lake.summaries WHERE content_session_id = ?", [session_id]
    )
    assert summaries == [(1,)]


def test_a_session_end_of_a_project_off_the_allowlist_publishes_nothing(
    team_lake: Any, make_service: Any
) -> None:
    svc = make_service(
        **{
            **team_env(team_lake, WORKBENCH_TEAM_PUBLISH_ON_STOP="1"),
            "WORKBENCH_TEAM_PUBLISH_IDLE_S": "3600",
            "WORKBENCH_TEAM_PROJECTS": "another-project",
        }
    )
    for name in [*CLAUDE_SESSION, "session_end"]:
        claude(name, svc.env)
    svc.wait_idle()

    svc.stop()  # the publisher thread finishes any run under way at stop
    assert not (svc.data_dir / "team_publish.json").exists()
    assert not team_lake.data.exists() or not list(team_lake.data.rglob("*.parquet"))


def test_the_session_end_hook_itself_loads_nothing_of_the_lake(
    team_lake: Any, tmp_path: Path
) -> None:
    env = {**run_env(tmp_path), **team_env(team_lake, WORKBENCH_TEAM_PUBLISH_ON_STOP="1")}
    payload = (FIXTURES / "hooks" / "session_end.json").read_bytes()

    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(HOOKS_DIR / "session_end.py")],
        input=payload,
        env=env,
        capture_output=True,
        timeout=60,
    )

    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {}
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines()]
    assert "json" in imported
    assert not [m for m in imported if m.split(".")[0] in ("duckdb", "pyarrow", "psycopg")]
    assert not [m for m in imported if m.startswith("workbench.team")]
