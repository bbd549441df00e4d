"""The append-only events log and the durable work queue over it.

Every accepted hook event (after redaction) is appended to ``events`` and never changed (SQL
triggers refuse UPDATE and DELETE). Events that need compression also get a ``queue`` row:
pending → claimed → done, or back to pending with a backoff, or failed with its reason after a
bounded number of attempts. Nothing is dropped silently and nothing replays forever.

The idempotency key (``event_key``) makes appends safe to repeat: a hook retry or a spool replay
of an event the service already has returns the existing id.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Any

from workbench.clock import iso_from_ms, now_ms
from workbench.store.connection import atomic

WORKER_ID = f"pid:{os.getpid()}"


@dataclass(frozen=True)
class EventRow:
    """One event as the worker sees it."""

    id: int
    kind: str
    content_session_id: str | None
    project: str | None
    prompt_number: int
    payload: dict[str, Any]
    received_at_epoch: int
    attempts: int = 0


def _row_to_event(row: sqlite3.Row) -> EventRow:
    keys = row.keys()
    return EventRow(
        id=row["id"],
        kind=row["kind"],
        content_session_id=row["content_session_id"],
        project=row["project"],
        prompt_number=row["prompt_number"],
        payload=json.loads(row["payload"]),
        received_at_epoch=row["received_at_epoch"],
        attempts=row["attempts"] if "attempts" in keys and row["attempts"] is not None else 0,
    )


def find_by_key(conn: sqlite3.Connection, event_key: str) -> int | None:
    row = conn.execute("SELECT id FROM events WHERE event_key = ?", (event_key,)).fetchone()
    return int(row[0]) if row else None


def last_of_session(conn: sqlite3.Connection, content_session_id: str) -> tuple[int, str] | None:
    """``(id, kind)`` of the session's latest event (``events_session`` index), or None."""
    row = conn.execute(
        "SELECT id, kind FROM events WHERE content_session_id = ? ORDER BY id DESC LIMIT 1",
        (content_session_id,),
    ).fetchone()
    return (int(row[0]), str(row[1])) if row else None


def append(
    conn: sqlite3.Connection,
    kind: str,
    payload: dict[str, Any],
    *,
    event_key: str | None,
    content_session_id: str | None,
    project: str | None,
    prompt_number: int = 0,
    enqueue: bool,
    received_ms: int | None = None,
) -> tuple[int, bool]:
    """Append one event (and its queue row); return ``(event_id, created)``.

    Call inside ``atomic()`` together with the event's synchronous effects, so the log and the
    rows it explains can never disagree.
    """
    if event_key:
        existing = find_by_key(conn, event_key)
        if existing is not None:
            return existing, False
    ms = received_ms if received_ms is not None else now_ms()
    cur = conn.execute(
        "INSERT INTO events (event_key, kind, content_session_id, project, prompt_number,"
        " payload, received_at, received_at_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            event_key,
            kind,
            content_session_id,
            project,
            prompt_number,
            json.dumps(payload, ensure_ascii=False),
            iso_from_ms(ms),
            ms,
        ),
    )
    event_id = int(cur.lastrowid or 0)
    if enqueue:
        conn.execute(
            "INSERT INTO queue (event_id, status, attempts, next_attempt_at, updated_at)"
            " VALUES (?, 'pending', 0, 0, ?)",
            (event_id, ms),
        )
    return event_id, True


def get(conn: sqlite3.Connection, event_id: int) -> EventRow | None:
    row = conn.execute(
        "SELECT e.*, q.attempts FROM events e LEFT JOIN queue q ON q.event_id = e.id"
        " WHERE e.id = ?",
        (event_id,),
    ).fetchone()
    return _row_to_event(row) if row else None


def claim(conn: sqlite3.Connection, worker: str = WORKER_ID, limit: int = 1) -> list[EventRow]:
    """Claim up to ``limit`` of the oldest ready events (pending, past their backoff).

    Claiming a batch in one transaction lets the worker amortise the transaction cost over
    many events; they are still processed in id order.
    """
    now = now_ms()
    with atomic(conn):
        rows = conn.execute(
            "UPDATE queue SET status = 'claimed', claimed_at = ?, claimed_by = ?, updated_at = ?"
            " WHERE event_id IN (SELECT event_id FROM queue WHERE status = 'pending'"
            " AND next_attempt_at <= ? ORDER BY event_id LIMIT ?)"
            " RETURNING event_id",
            (now, worker, now, now, limit),
        ).fetchall()
        if not rows:
            return []
        ids = sorted(int(r[0]) for r in rows)
        found = conn.execute(
            "SELECT e.*, q.attempts FROM events e JOIN queue q ON q.event_id = e.id"
            f" WHERE e.id IN ({','.join('?' * len(ids))}) ORDER BY e.id",
            ids,
        ).fetchall()
        return [_row_to_event(r) for r in found]


def ack(conn: sqlite3.Connection, event_id: int) -> None:
    """Mark an event done. Call inside the transaction that stores its results."""
    conn.execute(
        "UPDATE queue SET status = 'done', last_error = NULL, updated_at = ? WHERE event_id = ?",
        (now_ms(), event_id),
    )


def fail(
    conn: sqlite3.Connection,
    event_id: int,
    error: str,
    *,
    retryable: bool,
    max_attempts: int,
    base_delay_s: float,
    max_delay_s: float,
    min_delay_s: float = 0.0,
) -> str:
    """Record a failed attempt: back off and retry, or park as failed. Returns the new status."""
    now = now_ms()
    with atomic(conn):
        row = conn.execute("SELECT attempts FROM queue WHERE event_id = ?", (event_id,)).fetchone()
        attempts = (int(row[0]) if row else 0) + 1
        if retryable and attempts < max_attempts:
            backoff = min(max_delay_s, base_delay_s * 2 ** (attempts - 1))
            delay_ms = int(max(backoff, min_delay_s) * 1000)  # a provider's retry-after wins
            status, next_at = "pending", now + delay_ms
        else:
            status, next_at = "failed", now
        conn.execute(
            "UPDATE queue SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?,"
            " claimed_at = NULL, claimed_by = NULL, updated_at = ? WHERE event_id = ?",
            (status, attempts, next_at, error[:2000], now, event_id),
        )
    return status


def release_claims(
    conn: sqlite3.Connection, error: str, *, delay_s: float, worker: str = WORKER_ID
) -> int:
    """Put back every event ``worker`` holds claimed: pending again after ``delay_s``.

    For a batch whose store step failed because of the store itself (disk full, a lock held
    elsewhere, the file gone): not the events' fault, so their attempts are left as they were,
    and the reason is kept in ``last_error``. The worker calls this between batches, when it
    legitimately holds nothing, so whatever is still claimed by it was orphaned by the failure.
    """
    now = now_ms()
    with atomic(conn):
        cur = conn.execute(
            "UPDATE queue SET status = 'pending', claimed_at = NULL, claimed_by = NULL,"
            " next_attempt_at = ?, last_error = ?, updated_at = ?"
            " WHERE status = 'claimed' AND claimed_by = ?",
            (now + int(delay_s * 1000), error[:2000], now, worker),
        )
    return cur.rowcount


def requeue_claimed(conn: sqlite3.Connection) -> int:
    """Put back work claimed by a process that died (called once at service start)."""
    with atomic(conn):
        cur = conn.execute(
            "UPDATE queue SET status = 'pending', claimed_at = NULL, claimed_by = NULL,"
            " updated_at = ? WHERE status = 'claimed'",
            (now_ms(),),
        )
    return cur.rowcount


def retry_failed(conn: sqlite3.Connection, event_ids: list[int] | None = None) -> int:
    """Give parked events a fresh set of attempts (after fixing a key, say)."""
    now = now_ms()
    sql = (
        "UPDATE queue SET status = 'pending', attempts = 0, next_attempt_at = 0, updated_at = ?"
        " WHERE status = 'failed'"
    )
    params: list[Any] = [now]
    if event_ids:
        sql += f" AND event_id IN ({','.join('?' * len(event_ids))})"
        params.extend(event_ids)
    with atomic(conn):
        return conn.execute(sql, params).rowcount


def depth(conn: sqlite3.Connection) -> dict[str, int]:
    """Queue counts by status (every status present, zero when empty)."""
    counts = {"pending": 0, "claimed": 0, "done": 0, "failed": 0}
    for status, count in conn.execute("SELECT status, count(*) FROM queue GROUP BY status"):
        counts[status] = count
    return counts


def backlog(conn: sqlite3.Connection) -> dict[str, int]:
    """Pending and claimed counts only: an index range scan, cheap however long the log is.

    ``depth`` counts done events too, a scan that grows with history; live status updates
    use this instead.
    """
    counts = {"pending": 0, "claimed": 0}
    for status, count in conn.execute(
        "SELECT status, count(*) FROM queue WHERE status IN ('pending', 'claimed') GROUP BY status"
    ):
        counts[status] = count
    return counts


def failed(conn: sqlite3.Connection, limit: int = 50) -> list[dict[str, Any]]:
    """Parked events with their reasons, newest first."""
    rows = conn.execute(
        "SELECT q.event_id, e.kind, e.content_session_id, e.project, q.attempts, q.last_error,"
        " q.updated_at FROM queue q JOIN events e ON e.id = q.event_id"
        " WHERE q.status = 'failed' ORDER BY q.updated_at DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [
        {
            "eventId": r["event_id"],
            "kind": r["kind"],
            "contentSessionId": r["content_session_id"],
            "project": r["project"],
            "attempts": r["attempts"],
            "reason": r["last_error"],
            "failedAt": iso_from_ms(r["updated_at"]),
        }
        for r in rows
    ]


def select_for_recompress(
    conn: sqlite3.Connection, *, project: str | None, since_ms: int | None
) -> list[EventRow]:
    """Observation and summarize events to re-derive, oldest first."""
    # A scrubbed event has no payload left to derive from (``scrub``): its memory stays gone.
    sql = (
        "SELECT * FROM events WHERE kind IN ('observation', 'summarize')"
        " AND NOT EXISTS (SELECT 1 FROM events s WHERE s.kind = 'scrub'"
        " AND json_extract(s.payload, '$.event_id') = events.id)"
    )
    params: list[Any] = []
    if project:
        sql += " AND project = ?"
        params.append(project)
    if since_ms is not None:
        sql += " AND received_at_epoch >= ?"
        params.append(since_ms)
    return [_row_to_event(r) for r in conn.execute(sql + " ORDER BY id", params)]


# ----- scrub: the one sanctioned rewrite of the log (migration m007) ----------------------------
@dataclass(frozen=True)
class Scrub:
    """One scrubbed event: its payload is now ``{"scrubbed": sha256}``."""

    event_id: int
    event_key: str | None
    sha256: str
    record_id: int  # the ``scrub`` event that records it
    already: bool = False  # scrubbed by an earlier call; nothing changed now


def is_scrubbed(conn: sqlite3.Connection, event_id: int) -> bool:
    row = conn.execute(
        "SELECT 1 FROM events WHERE kind = 'scrub' AND json_extract(payload, '$.event_id') = ?"
        " LIMIT 1",
        (event_id,),
    ).fetchone()
    return row is not None


def scrub(
    conn: sqlite3.Connection,
    event_id: int,
    *,
    observation_ids: list[int],
    reason: str = "forget",
) -> Scrub | None:
    """Replace one event's payload by its sha256 and append the ``scrub`` event recording it.

    The only function that rewrites the log. The ``events_append_only_update`` trigger lets
    exactly this update through, and only once a ``scrub`` event names the event and the
    hash, so the log itself says what was removed, when and why (the hash proves which
    payload it was, to whoever still holds a copy). Call inside ``atomic()`` with the
    deletion it serves. None when there is no such event (or it is itself a scrub record).
    """
    row = conn.execute(
        "SELECT id, event_key, kind, content_session_id, project, prompt_number, payload"
        " FROM events WHERE id = ?",
        (event_id,),
    ).fetchone()
    if row is None or row["kind"] == "scrub":
        return None
    existing = conn.execute(
        "SELECT id, json_extract(payload, '$.sha256') FROM events WHERE kind = 'scrub'"
        " AND json_extract(payload, '$.event_id') = ? ORDER BY id LIMIT 1",
        (event_id,),
    ).fetchone()
    if existing is not None:
        return Scrub(event_id, row["event_key"], str(existing[1]), int(existing[0]), already=True)
    digest = hashlib.sha256(str(row["payload"]).encode("utf-8")).hexdigest()
    record_id, _ = append(
        conn,
        "scrub",
        {
            "event_id": event_id,
            "sha256": digest,
            "kind": row["kind"],
            "observation_ids": observation_ids,
            "reason": reason,
        },
        event_key=None,
        content_session_id=row["content_session_id"],
        project=row["project"],
        prompt_number=row["prompt_number"],
        enqueue=False,
    )
    conn.execute(
        "UPDATE events SET payload = json_object('scrubbed', ?) WHERE id = ?", (digest, event_id)
    )
    # Nothing left to derive: a parked or waiting attempt must not run on the hash (and its
    # last error may quote the payload).
    conn.execute(
        "UPDATE queue SET status = 'done', last_error = NULL, updated_at = ?"
        " WHERE event_id = ? AND status IN ('pending', 'failed')",
        (now_ms(), event_id),
    )
    return Scrub(event_id, row["event_key"], digest, record_id)
