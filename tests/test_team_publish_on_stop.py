"""``team_publish_on_stop``: a session through the real hooks ends, and its rows reach the lake.

Real parts: the session's PostgreSQL as the catalog, the real service (``make_service``), the
real hook scripts as subprocesses fed Codex CLI's fixtures (tests/fixtures/hooks/codex/), and
``workbench team status`` as a CLI run. The publish happens in the service's background thread
after the summary is stored; the hook's own path has no lake work (checked on what the hook
imports, not on timing).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agent_hooks import db_rows, script_argv
from tests.conftest import FIXTURES, free_port, run_workbench
from tests.test_hooks_platforms import SESSION, load, run

pytestmark = pytest.mark.slow

PROJECT = "acme-api"  # the cwd of every Codex fixture


def team_env(lake: Any, **extra: str) -> dict[str, str]:
    return {
        "WORKBENCH_TEAM_CATALOG": lake.dsn,
        "WORKBENCH_TEAM_DATA": str(lake.data),
        "WORKBENCH_TEAM_PROJECTS": PROJECT,
        "WORKBENCH_TEAM_AUTHOR": "ana",
        **extra,
    }


def run_session(svc: Any) -> str:
    start = load("codex", "session_start")
    run("codex", start, svc.env)
    for name in SESSION["codex"]:
        assert run("codex", load("codex", name), svc.env) == {}
    svc.wait_idle()
    return str(start["session_id"])


def wait_for_publish(data_dir: Path, timeout: float = 90.0) -> dict[str, Any]:
    """The service's record of its publish run, once written (the run's end)."""
    target = data_dir / "team_publish.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if target.is_file():
            return json.loads(target.read_text("utf-8"))
        time.sleep(0.1)
    raise AssertionError(f"the service recorded no team publish in {timeout}s")


def test_a_session_that_ends_is_published_by_the_service(
    team_lake: Any, make_service: Any, tmp_path: Path
) -> None:
    svc = make_service(
        **team_env(team_lake, WORKBENCH_TEAM_PUBLISH_ON_STOP="1", WORKBENCH_TEAM_PUBLISH_IDLE_S="0")
    )

    session_id = run_session(svc)
    entry = wait_for_publish(svc.data_dir)

    assert entry["error"] is None, entry
    assert entry["trigger"] == "stop hook"
    local = sorted(
        o["title"]
        for o in db_rows(svc, "SELECT * FROM observations WHERE content_session_id = ?", session_id)
    )
    assert local
    published = team_lake.query(
        tmp_path,
        "SELECT title FROM lake.observations WHERE author = 'ana' AND content_session_id = ?",
        [session_id],
    )
    assert sorted(t for (t,) in published) == local
    summaries = team_lake.query(
        tmp_path, "SELECT count(*) FROM lake.summaries WHERE content_session_id = ?", [session_id]
    )
    assert summaries == [(1,)]
    status = run_workbench(svc.env, "team", "status", "--json")
    assert status.returncode == 0, status.stderr
    last = json.loads(status.stdout)["last_publish"]
    assert last["trigger"] == "stop hook"
    assert last["snapshot"] == entry["snapshot"] is not None
    assert sum(last["added"].values()) >= len(local) + 1


def test_off_by_default_nothing_reaches_the_lake(
    team_lake: Any, make_service: Any, tmp_path: Path
) -> None:
    svc = make_service(**team_env(team_lake))

    session_id = run_session(svc)

    assert db_rows(svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", session_id)
    svc.stop()  # a publisher thread, had one been started, finishes its run at stop
    assert not (svc.data_dir / "team_publish.json").exists()
    assert not team_lake.data.exists() or not list(team_lake.data.rglob("*.parquet"))


def test_an_unreachable_lake_is_recorded_and_shown_by_team_status(
    make_service: Any, tmp_path: Path
) -> None:
    closed = free_port()
    svc = make_service(
        WORKBENCH_TEAM_CATALOG=f"postgres://postgres@127.0.0.1:{closed}/lake",
        WORKBENCH_TEAM_DATA=str(tmp_path / "lake"),
        WORKBENCH_TEAM_PROJECTS=PROJECT,
        WORKBENCH_TEAM_PUBLISH_ON_STOP="1",
        WORKBENCH_TEAM_PUBLISH_IDLE_S="0",
    )

    session_id = run_session(svc)
    entry = wait_for_publish(svc.data_dir)

    assert f"127.0.0.1:{closed}" in entry["error"]
    assert db_rows(svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", session_id)
    status = run_workbench(svc.env, "team", "status")
    assert status.returncode != 0  # the lake does not answer now either
    assert "last publish" in status.stdout + status.stderr
    assert "FAILED" in status.stdout + status.stderr


def test_the_stop_hook_itself_loads_nothing_of_the_lake(team_lake: Any, tmp_path: Path) -> None:
    env = {
        **run_env(tmp_path),
        **team_env(team_lake, WORKBENCH_TEAM_PUBLISH_ON_STOP="1"),
    }
    payload = (FIXTURES / "hooks" / "codex" / "stop.json").read_bytes()

    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *script_argv("stop", "codex")[1:]],
        input=payload,
        env=env,
        capture_output=True,
        timeout=60,
    )

    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {}
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines()]
    assert "json" in imported  # the import log is there to read
    assert not [m for m in imported if m.split(".")[0] in ("duckdb", "pyarrow", "psycopg")]
    assert not [m for m in imported if m.startswith("workbench.team")]


def run_env(tmp_path: Path) -> dict[str, str]:
    from tests.conftest import base_env

    data_dir = tmp_path / "hook"
    data_dir.mkdir()
    return base_env(data_dir, free_port())  # nothing listens: the hook spools and returns


def test_team_status_shows_the_last_cli_publish(team_lake: Any, tmp_path: Path) -> None:
    from tests.team_harness import init, machine, seed

    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["cache layer"])
    init(ana, team_lake, "api", author="ana")
    assert json.loads(ana.run("team", "status", "--json").stdout)["last_publish"] is None

    published = ana.publish_json()

    last = json.loads(ana.run("team", "status", "--json").stdout)["last_publish"]
    assert last["trigger"] == "workbench publish"
    assert last["snapshot"] == published["snapshot"]
    assert last["added"] == published["added"]
    assert "2 rows" in ana.run("team", "status").stdout  # a session and an observation
