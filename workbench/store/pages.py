"""One page of a table, newest first, optionally for one project and one agent platform:
the list routes' query.

``hasMore`` is computed by fetching one row more than asked, which costs nothing extra and
needs no ``count(*)`` over a table that may hold 100k rows.
"""

from __future__ import annotations

import sqlite3

PLATFORM_TABLES = ("sessions", "observations")  # the tables with a platform_source column


def newest(
    conn: sqlite3.Connection,
    table: str,
    *,
    project: str | None,
    offset: int,
    limit: int,
    time_column: str = "created_at_epoch",
    platform_source: str | None = None,
) -> tuple[list[sqlite3.Row], bool]:
    """Rows of ``table`` newest first (ties by id), and whether more follow.

    ``platform_source``: sessions and observations carry it; prompts and summaries take
    their session's.
    """
    clauses: list[str] = []
    params: list[object] = []
    if project:
        clauses.append("project = ?")
        params.append(project)
    if platform_source:
        clauses.append(
            "platform_source = ?"
            if table in PLATFORM_TABLES
            else "content_session_id IN"
            " (SELECT content_session_id FROM sessions WHERE platform_source = ?)"
        )
        params.append(platform_source)
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    rows = conn.execute(
        f"SELECT * FROM {table}{where} ORDER BY {time_column} DESC, id DESC LIMIT ? OFFSET ?",
        [*params, limit + 1, offset],
    ).fetchall()
    return rows[:limit], len(rows) > limit
