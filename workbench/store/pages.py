"""One page of a table, newest first, optionally for one project: the list routes' query.

``hasMore`` is computed by fetching one row more than asked, which costs nothing extra and
needs no ``count(*)`` over a table that may hold 100k rows.
"""

from __future__ import annotations

import sqlite3


def newest(
    conn: sqlite3.Connection,
    table: str,
    *,
    project: str | None,
    offset: int,
    limit: int,
    time_column: str = "created_at_epoch",
) -> tuple[list[sqlite3.Row], bool]:
    """Rows of ``table`` newest first (ties by id), and whether more follow."""
    where, params = (" WHERE project = ?", [project]) if project else ("", [])
    rows = conn.execute(
        f"SELECT * FROM {table}{where} ORDER BY {time_column} DESC, id DESC LIMIT ? OFFSET ?",
        [*params, limit + 1, offset],
    ).fetchall()
    return rows[:limit], len(rows) > limit
