"""Sessions and user prompts.

A session's ``prompt_counter`` counts every accepted prompt, private ones included, but a
private prompt (empty after redaction) gets no ``user_prompts`` row: its number is a gap. That
gap is how the ingest path knows the observations and summary of that prompt must be skipped,
without ever storing anything about its text.
"""

from __future__ import annotations

import sqlite3

from workbench.clock import iso_from_ms, now_ms
from workbench.models import Prompt, Session
from workbench.store import pages

MAX_PROMPT_CHARS = 4000
DUPLICATE_PROMPT_WINDOW_MS = 10_000


def _session(row: sqlite3.Row) -> Session:
    return Session(**dict(row))


def get(conn: sqlite3.Connection, content_session_id: str) -> Session | None:
    row = conn.execute(
        "SELECT * FROM sessions WHERE content_session_id = ?", (content_session_id,)
    ).fetchone()
    return _session(row) if row else None


def ensure(
    conn: sqlite3.Connection,
    content_session_id: str,
    project: str,
    platform_source: str = "claude-code",
    at_ms: int | None = None,
    project_key: str | None = None,
) -> Session:
    """Return the session, creating it (active) when new. Call inside ``atomic()``.

    ``project_key``: which folder the project is (``workbench.locate.project_identity``);
    without one, a trigger (m012) keys the session by its name. An existing session keeps
    its own: a session is one project from its first event on.
    """
    ms = at_ms if at_ms is not None else now_ms()
    # Trigger: no key. / Why: callers on stores older than m012 (tests, imports) use the
    # INSERT every schema accepts. / Outcome: the column is named only when there is a key.
    keyed = ", project_key" if project_key else ""
    conn.execute(
        f"INSERT INTO sessions (content_session_id, project, platform_source, status,"
        f" started_at, started_at_epoch{keyed}) VALUES (?, ?, ?, 'active', ?, ?"
        f"{', ?' if project_key else ''}) ON CONFLICT (content_session_id) DO NOTHING",
        (
            content_session_id,
            project,
            platform_source,
            iso_from_ms(ms),
            ms,
            *([project_key] if project_key else []),
        ),
    )
    session = get(conn, content_session_id)
    assert session is not None  # just inserted or already there
    return session


def record_prompt(
    conn: sqlite3.Connection, session: Session, cleaned: str, at_ms: int | None = None
) -> tuple[int, int | None, bool]:
    """Count a new prompt; store its text unless private (empty after redaction).

    Returns ``(prompt_number, prompt_id or None, duplicate)``. The same cleaned text in the
    same session within 10 s is a duplicate (a hook retried by the harness): nothing changes.
    """
    ms = at_ms if at_ms is not None else now_ms()
    text = cleaned[:MAX_PROMPT_CHARS]
    if text:
        last = conn.execute(
            "SELECT id, prompt_number, prompt_text, created_at_epoch FROM user_prompts"
            " WHERE content_session_id = ? ORDER BY prompt_number DESC LIMIT 1",
            (session.content_session_id,),
        ).fetchone()
        if (
            last is not None
            and last["prompt_text"] == text
            and last["prompt_number"] == session.prompt_counter
            and abs(ms - last["created_at_epoch"]) <= DUPLICATE_PROMPT_WINDOW_MS
        ):
            return int(last["prompt_number"]), int(last["id"]), True
    number = session.prompt_counter + 1
    conn.execute(
        "UPDATE sessions SET prompt_counter = ?, status = 'active', completed_at = NULL,"
        " completed_at_epoch = NULL WHERE id = ?",
        (number, session.id),
    )
    if not text:
        return number, None, False
    cur = conn.execute(
        "INSERT INTO user_prompts (session_id, content_session_id, project, prompt_number,"
        " prompt_text, created_at, created_at_epoch) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            session.id,
            session.content_session_id,
            session.project,
            number,
            text,
            iso_from_ms(ms),
            ms,
        ),
    )
    return number, int(cur.lastrowid or 0), False


def prompt_text(conn: sqlite3.Connection, content_session_id: str, number: int) -> str | None:
    """The stored text of one prompt, or None when it was private (or never seen)."""
    row = conn.execute(
        "SELECT prompt_text FROM user_prompts WHERE content_session_id = ? AND prompt_number = ?",
        (content_session_id, number),
    ).fetchone()
    return str(row[0]) if row else None


def current_prompt_is_private(conn: sqlite3.Connection, session: Session) -> bool:
    """True when the session's latest prompt was private (counted but not stored)."""
    if session.prompt_counter == 0:
        return False
    return prompt_text(conn, session.content_session_id, session.prompt_counter) is None


def end(
    conn: sqlite3.Connection,
    content_session_id: str,
    status: str = "completed",
    at_ms: int | None = None,
) -> bool:
    """Mark a session completed (or failed); False when the session is unknown."""
    ms = at_ms if at_ms is not None else now_ms()
    cur = conn.execute(
        "UPDATE sessions SET status = ?, completed_at = ?, completed_at_epoch = ?"
        " WHERE content_session_id = ?",
        (status, iso_from_ms(ms), ms, content_session_id),
    )
    return cur.rowcount > 0


def list_prompts(
    conn: sqlite3.Connection,
    *,
    where: pages.Where = pages.EVERYTHING,
    offset: int,
    limit: int,
) -> tuple[list[Prompt], bool]:
    """A page of prompts, newest first, and whether more follow."""
    rows, more = pages.newest(
        conn,
        "user_prompts",
        where=where,
        offset=offset,
        limit=limit,
    )
    return [Prompt(**{k: r[k] for k in Prompt.model_fields}) for r in rows], more


def list_sessions(
    conn: sqlite3.Connection,
    *,
    where: pages.Where = pages.EVERYTHING,
    offset: int,
    limit: int,
) -> tuple[list[Session], bool]:
    """A page of sessions, most recently started first, and whether more follow."""
    rows, more = pages.newest(
        conn,
        "sessions",
        where=where,
        offset=offset,
        limit=limit,
        time_column="started_at_epoch",
    )
    return [_session(r) for r in rows], more
