"""m010: ``observations.platform_source``, from a store at m009 with rows, and on new rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import migrate_until
from workbench.models import ObservationDraft
from workbench.store import observations, schema, sessions
from workbench.store.connection import atomic, connect


def _legacy_observation(conn: sqlite3.Connection, content_session_id: str | None, n: int) -> int:
    with atomic(conn):
        cur = conn.execute(
            "INSERT INTO observations (content_session_id, project, type, title, created_at,"
            " created_at_epoch, content_hash) VALUES (?, 'p', 'discovery', ?, 'then', 0, ?)",
            (content_session_id, f"title {n}", f"hash-{n}"),
        )
    return int(cur.lastrowid or 0)


def test_m010_gives_existing_observations_their_sessions_platform(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    migrate_until(conn, "m009_rerank_cache")
    with atomic(conn):
        sessions.ensure(conn, "gem", "p", "gemini-cli", 0)
        sessions.ensure(conn, "cc", "p", "claude-code", 0)
    gem = _legacy_observation(conn, "gem", 1)
    cc = _legacy_observation(conn, "cc", 2)
    orphan = _legacy_observation(conn, None, 3)

    assert schema.apply(conn, "w.db")[0] == "m010_observation_platform"

    rows = dict(conn.execute("SELECT id, platform_source FROM observations").fetchall())
    assert rows == {gem: "gemini-cli", cc: "claude-code", orphan: "claude-code"}
    assert schema.apply(conn, "w.db") == []  # applied once, recorded with it


def test_new_observations_take_their_sessions_platform(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    schema.apply(conn, "w.db")
    with atomic(conn):
        sessions.ensure(conn, "cdx", "p", "codex-cli", 0)
        made = {
            sid: observations.insert(
                conn, ObservationDraft(title=f"from {sid}"), content_session_id=sid, project="p"
            )[0]
            for sid in ("cdx", None)
        }
    rows = dict(conn.execute("SELECT id, platform_source FROM observations").fetchall())
    assert rows == {made["cdx"]: "codex-cli", made[None]: "claude-code"}
