"""The database file is deleted (or replaced) under a running service: nothing may be lost.

The report: 40 more events got 200, health said ok, and after a restart all were gone (they
had been committed into the unlinked file). Now the service notices (the file's device and
inode), refuses writes with 503 so the real hook scripts spool their events, says so in
``/api/health`` and ``workbench status``, and a restart replays the spool into the file now
at the path.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env, run_workbench
from tests.hook_harness import load_payload, run_hook, spooled
from tests.test_crash import query
from tests.test_hardening_store_lock import read_payload

pytestmark = pytest.mark.slow


def _backup(db: Path, to: Path) -> None:
    """A consistent copy of the live database (SQLite's online backup)."""
    source = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    target = sqlite3.connect(to)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


def _tool_use_ids(data_dir: Path) -> list[str]:
    rows = query(
        data_dir,
        "SELECT json_extract(payload, '$.tool_use_id') FROM events WHERE kind = 'observation'"
        " ORDER BY id",
    )
    return [r[0] for r in rows]


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_database_file_gone_under_the_service_refuses_writes_and_loses_nothing(
    how: str, make_service: Any, tmp_path: Path
) -> None:
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")  # replay only at the restart
    env = base_env(svc.data_dir, svc.port)
    db = svc.data_dir / "workbench.db"
    prompt = load_payload("user_prompt_submit", tmp_path)
    run_hook("user_prompt_submit", prompt, env).output()
    for n in range(2):
        assert run_hook("post_tool_use", read_payload(tmp_path, n), env).output() == {}
    assert spooled(svc.data_dir) == []
    svc.wait_idle()

    if how == "deleted":
        db.unlink()  # what `rm data/workbench.db` does; the -wal and -shm stay
    else:
        _backup(db, tmp_path / "restored.db")  # e.g. a user restoring yesterday's backup
        os.replace(tmp_path / "restored.db", db)

    status, refused = svc.post(
        "/api/sessions/observations",
        {"contentSessionId": prompt["session_id"], "tool_name": "Read", "tool_use_id": "x"},
    )
    assert status == 503, refused
    assert refused["error"] == "STORE_GONE"
    assert how in refused["message"]
    later = range(2, 6)
    for n in later:
        assert run_hook("post_tool_use", read_payload(tmp_path, n), env).output() == {}
    assert len(spooled(svc.data_dir)) == len(later)  # refused with 503, so spooled

    status, health = svc.get("/api/health")
    assert status == 200  # still recognisably ours, so hooks and the CLI find it
    assert health["status"] == "error"
    assert health["store"]["state"] == "unavailable"
    assert how in health["reason"]
    assert "workbench stop" in health["reason"]
    status, ready = svc.get("/api/readiness")
    assert status == 503
    assert ready["ready"] is False

    shown = run_workbench(env, "status", timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "not storing" in shown.stdout
    assert how in " ".join(shown.stdout.split())

    svc.stop()
    svc.start()  # the restart opens the file now at the path and replays the spool into it
    assert spooled(svc.data_dir) == []
    svc.wait_idle()
    before = [f"toolu_read_{n}" for n in range(2)] if how == "replaced" else []
    assert _tool_use_ids(svc.data_dir) == before + [f"toolu_read_{n}" for n in later]
    _, health = svc.get("/api/health")
    assert health["status"] == "ok"
    assert query(svc.data_dir, "PRAGMA integrity_check") == [("ok",)]


def test_the_wal_deleted_under_the_service_refuses_writes_and_keeps_every_acked_event(
    make_service: Any, tmp_path: Path
) -> None:
    """The report: ``rm workbench.db-wal workbench.db-shm``, 30 more events got 200 and health
    said ok; after a kill -9, 0 of the 40 events were left (they lived in the unlinked WAL).
    Now the service notices the WAL is gone, copies what it holds into the database file at
    once, refuses writes with 503 (the hooks spool) and says so in health."""
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")  # replay only at the restart
    env = base_env(svc.data_dir, svc.port)
    db = svc.data_dir / "workbench.db"
    prompt = load_payload("user_prompt_submit", tmp_path)
    run_hook("user_prompt_submit", prompt, env).output()
    before, after = range(10), range(10, 40)
    for n in before:
        assert run_hook("post_tool_use", read_payload(tmp_path, n), env).output() == {}
    assert spooled(svc.data_dir) == []

    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink()

    status, refused = svc.post(
        "/api/sessions/observations",
        {"contentSessionId": prompt["session_id"], "tool_name": "Read", "tool_use_id": "x"},
    )
    assert status == 503, refused
    assert refused["error"] == "STORE_GONE"
    assert "write-ahead log" in refused["message"]
    for n in after:
        assert run_hook("post_tool_use", read_payload(tmp_path, n), env).output() == {}
    assert len(spooled(svc.data_dir)) == len(after)  # refused with 503, so spooled
    status, health = svc.get("/api/health")
    assert status == 200
    assert health["status"] == "error"
    assert health["store"]["state"] == "unavailable"
    assert "write-ahead log" in health["reason"]

    svc.kill9()  # the report's kill -9: nothing acked may live only in the unlinked WAL
    svc.start()
    assert spooled(svc.data_dir) == []
    svc.wait_idle()
    assert _tool_use_ids(svc.data_dir) == [f"toolu_read_{n}" for n in (*before, *after)]
    _, health = svc.get("/api/health")
    assert health["status"] == "ok"
    assert query(svc.data_dir, "PRAGMA integrity_check") == [("ok",)]
