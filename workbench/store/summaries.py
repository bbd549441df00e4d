"""Session summaries: one per (session, prompt); a later summary of the same prompt replaces it.

Replacing (not appending) is deliberate: Stop can fire more than once for a prompt (a resumed
turn), and the newest digest covers everything the older one did.
"""

from __future__ import annotations

import json
import sqlite3

from workbench.clock import iso_from_ms, now_ms
from workbench.models import Summary, SummaryDraft
from workbench.store import pages

JSON_FIELDS = ("files_read", "files_edited")
TEXT_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes")


def from_row(row: sqlite3.Row) -> Summary:
    data = dict(row)
    for name in JSON_FIELDS:
        data[name] = json.loads(data[name])
    data.pop("session_id", None)
    data.pop("event_id", None)
    data.pop("updated_at_epoch", None)  # set by triggers (m011), for team publishing
    return Summary(**data)


def upsert(
    conn: sqlite3.Connection,
    draft: SummaryDraft,
    *,
    content_session_id: str,
    project: str,
    prompt_number: int,
    event_id: int | None = None,
    discovery_tokens: int = 0,
    generated_by: str = "offline",
    created_ms: int | None = None,
) -> int:
    """Store the summary of one prompt, replacing an older one; return its id."""
    ms = created_ms if created_ms is not None else now_ms()
    session_row = conn.execute(
        "SELECT id FROM sessions WHERE content_session_id = ?", (content_session_id,)
    ).fetchone()
    values = (
        session_row[0] if session_row else None,
        content_session_id,
        event_id,
        project,
        prompt_number,
        *(getattr(draft, f) for f in TEXT_FIELDS),
        *(json.dumps(getattr(draft, f), ensure_ascii=False) for f in JSON_FIELDS),
        discovery_tokens,
        iso_from_ms(ms),
        ms,
        generated_by,
    )
    updates = ", ".join(
        f"{c} = excluded.{c}"
        for c in ("event_id", *TEXT_FIELDS, *JSON_FIELDS, "discovery_tokens", "generated_by")
    )
    row = conn.execute(
        "INSERT INTO session_summaries (session_id, content_session_id, event_id, project,"
        f" prompt_number, {', '.join(TEXT_FIELDS)}, {', '.join(JSON_FIELDS)}, discovery_tokens,"
        f" created_at, created_at_epoch, generated_by) VALUES ({', '.join('?' * len(values))})"
        f" ON CONFLICT (content_session_id, prompt_number) DO UPDATE SET {updates}"
        " RETURNING id",
        values,
    ).fetchone()
    return int(row[0])


def get(conn: sqlite3.Connection, summary_id: int) -> Summary | None:
    row = conn.execute("SELECT * FROM session_summaries WHERE id = ?", (summary_id,)).fetchone()
    return from_row(row) if row else None


def list_page(
    conn: sqlite3.Connection,
    *,
    where: pages.Where = pages.EVERYTHING,
    offset: int,
    limit: int,
) -> tuple[list[Summary], bool]:
    """A page of summaries, newest first, and whether more follow."""
    rows, more = pages.newest(
        conn,
        "session_summaries",
        where=where,
        offset=offset,
        limit=limit,
    )
    return [from_row(r) for r in rows], more
