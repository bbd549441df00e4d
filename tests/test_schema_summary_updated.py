"""m011: ``session_summaries.updated_at_epoch``, from a store at m010 with rows, and on writes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import migrate_until
from workbench.models import SummaryDraft
from workbench.store import schema, sessions, summaries
from workbench.store.connection import atomic, connect


def _write(conn: sqlite3.Connection, text: str) -> int:
    with atomic(conn):
        return summaries.upsert(
            conn,
            SummaryDraft(request=text),
            content_session_id="s1",
            project="p",
            prompt_number=1,
            created_ms=1_000,
        )


def test_m011_dates_existing_summaries_and_every_rewrite(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    migrate_until(conn, "m010_observation_platform")
    with atomic(conn):
        sessions.ensure(conn, "s1", "p", "claude-code", 0)
    summary_id = _write(conn, "first")

    assert schema.apply(conn, "w.db")[0] == "m011_summary_updated_at"
    (before,) = conn.execute("SELECT updated_at_epoch FROM session_summaries").fetchone()
    assert before == 1_000  # an existing row: its creation time

    assert _write(conn, "second") == summary_id  # rewritten in place: same id
    (after, text) = conn.execute(
        "SELECT updated_at_epoch, request FROM session_summaries"
    ).fetchone()
    assert text == "second"
    assert after > 1_000_000_000_000  # the wall clock of the rewrite (ms), not created_ms
    assert summaries.get(conn, summary_id) is not None  # the model ignores the column
