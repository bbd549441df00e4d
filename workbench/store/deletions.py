"""Deleting an observation for good: the row goes, a tombstone stays (migration ``m005``).

Why a tombstone: observations are *derived* from the append-only events log, so deleting
the row alone would not last — ``recompress`` (or a worker retry of the same event) would
derive it again. ``keep_live`` filters a compressor's drafts against the tombstones, and
``derive.store_result`` calls it, so no derivation path can bring a deleted memory back.

What goes with the row: its FTS entry (trigger ``observations_fts_ad``); its vector and the
cached embedding are dropped by the indexer's next pass (``Indexer.sync`` notices the missing
id and calls ``vectors.forget``); corpora pick the change up on ``rebuild``.

What stays: the tombstone holds only the content hash and ids, never the text; the injection
ledger keeps its ids (accounting, no content); the event that produced the memory stays in
the append-only log (the API answer names it, ``eventId``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workbench.clock import iso_from_ms, now_ms
from workbench.models import ObservationDraft
from workbench.store.db import atomic
from workbench.store.observations import content_hash


@dataclass(frozen=True)
class Deleted:
    """What one deletion removed."""

    id: int
    project: str
    event_id: int | None
    content_hash: str


def delete_observation(conn: sqlite3.Connection, observation_id: int) -> Deleted | None:
    """Delete one observation and tombstone its content hash; None when there is no such id.

    One transaction: the tombstone and the delete commit together, so a crash never leaves a
    deleted memory without its tombstone (or a tombstone hiding a live one).
    """
    with atomic(conn):
        row = conn.execute(
            "SELECT id, project, event_id, content_session_id, content_hash FROM observations"
            " WHERE id = ?",
            (observation_id,),
        ).fetchone()
        if row is None:
            return None
        ms = now_ms()
        conn.execute(
            "INSERT INTO deleted_observations (content_hash, observation_id, event_id,"
            " content_session_id, project, deleted_at, deleted_at_epoch)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (content_hash) DO UPDATE SET"
            " observation_id = excluded.observation_id, deleted_at = excluded.deleted_at,"
            " deleted_at_epoch = excluded.deleted_at_epoch",
            (
                row["content_hash"],
                row["id"],
                row["event_id"],
                row["content_session_id"],
                row["project"],
                iso_from_ms(ms),
                ms,
            ),
        )
        conn.execute("DELETE FROM observations WHERE id = ?", (observation_id,))
    return Deleted(
        id=int(row["id"]),
        project=str(row["project"]),
        event_id=row["event_id"],
        content_hash=str(row["content_hash"]),
    )


def tombstoned(conn: sqlite3.Connection, hashes: Iterable[str]) -> set[str]:
    """The subset of ``hashes`` that belong to deleted observations."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return set()
    rows = conn.execute(
        "SELECT content_hash FROM deleted_observations"
        " WHERE content_hash IN (SELECT value FROM json_each(?))",
        (json.dumps(wanted),),
    )
    return {str(r[0]) for r in rows}


def keep_live(
    conn: sqlite3.Connection, content_session_id: str | None, drafts: Sequence[ObservationDraft]
) -> list[ObservationDraft]:
    """``drafts`` minus those a person deleted before (same content hash as a tombstone)."""
    if not drafts:
        return []
    keyed = [(content_hash(content_session_id, d.title, d.narrative), d) for d in drafts]
    dead = tombstoned(conn, [k for k, _ in keyed])
    return [d for k, d in keyed if k not in dead]


def was_deleted(conn: sqlite3.Connection, observation_id: int) -> bool:
    """True when ``observation_id`` names a deleted observation (a 410-style answer)."""
    row = conn.execute(
        "SELECT 1 FROM deleted_observations WHERE observation_id = ? LIMIT 1", (observation_id,)
    ).fetchone()
    return row is not None
