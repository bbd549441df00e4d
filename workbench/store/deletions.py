"""Deleting an observation for good: the row, its source, and the bytes on disk.

Why a tombstone: observations are *derived* from the append-only events log, so deleting
the row alone would not last — ``recompress`` (or a worker retry of the same event) would
derive it again, and an import of an older export would bring it back. So a deletion also:

- **scrubs the source event** (``events.scrub``): its payload becomes its sha256, recorded by
  a ``scrub`` event in the log itself (migration ``m007``). Recompress skips scrubbed events,
  so no wording of the memory, old or new, can be derived from them again;
- **tombstones** the content hash *and* the origin (session, ``created_at_epoch``): ``keep_live``
  filters a compressor's drafts (``derive.store_result`` calls it) and ``transfer`` refuses an
  imported row that matches either, so a differently worded copy of it stays out too.

What goes with the row: its FTS entry (trigger ``observations_fts_ad``); its vector and the
cached embedding are dropped by the indexer's next pass (``Indexer.sync`` notices the missing
id and calls ``vectors.forget``); corpora pick the change up on ``rebuild``.

``purge`` then makes the bytes go: deleted FTS entries linger in index segments until they
are merged (``optimize``), and a page SQLite freed or rewrote keeps its old bytes (free pages,
the unused part of live pages, the WAL) until overwritten. ``purge`` merges the FTS index,
rebuilds the file (``VACUUM``, with ``secure_delete`` on) and truncates the WAL.

What stays: the tombstone holds only the hash and ids, never the text; the injection ledger
keeps its ids (accounting, no content); the log keeps the event row with its hash, and the
``scrub`` record. Sibling observations derived from the same event stay (their text is their
own), but can no longer be re-derived.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workbench.clock import iso_from_ms, now_ms
from workbench.models import ObservationDraft
from workbench.store import events
from workbench.store.connection import atomic
from workbench.store.events import Scrub
from workbench.store.observations import content_hash
from workbench.store.schema import FTS_TABLES


@dataclass(frozen=True)
class Deleted:
    """What one deletion removed."""

    id: int
    project: str
    event_id: int | None
    content_hash: str
    scrub: Scrub | None = None  # the source event, scrubbed now (or earlier)


def delete_observation(conn: sqlite3.Connection, observation_id: int) -> Deleted | None:
    """Delete one observation, tombstone it, scrub its source event; None when no such id.

    One transaction: the tombstone, the scrub and the delete commit together, so a crash never
    leaves a deleted memory without its tombstone (or a tombstone hiding a live one), nor a
    scrubbed event whose memory is still there.
    """
    with atomic(conn):
        row = conn.execute(
            "SELECT id, project, event_id, content_session_id, content_hash, prompt_number,"
            " created_at_epoch FROM observations WHERE id = ?",
            (observation_id,),
        ).fetchone()
        if row is None:
            return None
        ms = now_ms()
        conn.execute(
            "INSERT INTO deleted_observations (content_hash, observation_id, event_id,"
            " content_session_id, project, deleted_at, deleted_at_epoch, prompt_number,"
            " created_at_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (content_hash) DO UPDATE SET"
            " observation_id = excluded.observation_id, deleted_at = excluded.deleted_at,"
            " deleted_at_epoch = excluded.deleted_at_epoch, event_id = excluded.event_id,"
            " prompt_number = excluded.prompt_number,"
            " created_at_epoch = excluded.created_at_epoch",
            (
                row["content_hash"],
                row["id"],
                row["event_id"],
                row["content_session_id"],
                row["project"],
                iso_from_ms(ms),
                ms,
                row["prompt_number"],
                row["created_at_epoch"],
            ),
        )
        conn.execute("DELETE FROM observations WHERE id = ?", (observation_id,))
        scrubbed = None
        if row["event_id"] is not None:
            scrubbed = events.scrub(conn, int(row["event_id"]), observation_ids=[int(row["id"])])
    return Deleted(
        id=int(row["id"]),
        project=str(row["project"]),
        event_id=row["event_id"],
        content_hash=str(row["content_hash"]),
        scrub=scrubbed,
    )


def scrub_earlier_deletion(conn: sqlite3.Connection, observation_id: int) -> Scrub | None:
    """Scrub the source event of an observation deleted before scrubbing existed (m005 era).

    None when the id was never deleted, had no source event, or the event is gone.
    """
    with atomic(conn):
        row = conn.execute(
            "SELECT event_id FROM deleted_observations WHERE observation_id = ?"
            " AND event_id IS NOT NULL ORDER BY deleted_at_epoch DESC LIMIT 1",
            (observation_id,),
        ).fetchone()
        if row is None:
            return None
        return events.scrub(conn, int(row[0]), observation_ids=[observation_id])


@dataclass(frozen=True)
class Purge:
    """What ``purge`` did to the file."""

    fts_merged: bool
    vacuumed: bool
    wal_truncated: bool


def purge(conn: sqlite3.Connection) -> Purge:
    """Make deleted text leave the disk: merge the FTS index, rebuild the file, empty the WAL.

    Outside any transaction (``VACUUM`` refuses to run in one). ``secure_delete`` zeroes what
    these steps free; it is restored after, because zeroing on every ordinary delete (the
    queue churns) costs writes for nothing. A VACUUM or checkpoint that another connection
    blocks is reported (False), not raised: the rows are gone either way, and the next
    ``purge`` finishes the job.
    """
    (previous,) = conn.execute("PRAGMA secure_delete").fetchone()
    conn.execute("PRAGMA secure_delete = ON")
    try:
        with atomic(conn):
            # Every index, not only the observations': forget also rewrites summaries
            # (``workbench.forget_words``), whose old tokens linger in their own segments.
            for fts in FTS_TABLES:
                conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")
        try:
            conn.execute("VACUUM")
            vacuumed = True
        except sqlite3.OperationalError:
            vacuumed = False
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(previous)}")
    return Purge(fts_merged=True, vacuumed=vacuumed, wal_truncated=busy == 0)


def any_deleted(conn: sqlite3.Connection) -> bool:
    """True once any observation was deleted here (a tombstone exists)."""
    found: int = conn.execute("SELECT EXISTS (SELECT 1 FROM deleted_observations)").fetchone()[0]
    return found == 1


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
    conn: sqlite3.Connection,
    content_session_id: str | None,
    drafts: Sequence[ObservationDraft],
    *,
    event_id: int | None = None,
) -> list[ObservationDraft]:
    """``drafts`` minus those a person deleted before (same content hash as a tombstone);
    none at all when they come from a scrubbed event (``event_id``), however worded."""
    if not drafts:
        return []
    if event_id is not None and events.is_scrubbed(conn, event_id):
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


def forgotten_origin(
    conn: sqlite3.Connection, content_session_id: str | None, created_at_epoch: int
) -> bool:
    """True when a deleted observation came from this session at this instant (an import of
    an older export: the same memory, perhaps worded differently, so another hash)."""
    row = conn.execute(
        "SELECT 1 FROM deleted_observations WHERE content_session_id IS ?"
        " AND created_at_epoch = ? LIMIT 1",
        (content_session_id, created_at_epoch),
    ).fetchone()
    return row is not None
