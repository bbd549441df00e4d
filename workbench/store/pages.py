"""One page of a table, newest first, under the caller's filter: the list routes' query.

The filter arrives compiled (``Where``: WHERE fragments and their parameters, from
``SearchFilters.table_sql``, the one SQLite compiler of filters), so a list route's
``project`` or ``platform_source`` means what it means in search.

``hasMore`` is computed by fetching one row more than asked, which costs nothing extra and
needs no ``count(*)`` over a table that may hold 100k rows.
"""

from __future__ import annotations

import sqlite3
from typing import Any

Where = tuple[list[str], list[Any]]  # WHERE fragments (AND-ed) and their parameters
EVERYTHING: Where = ([], [])


def newest(
    conn: sqlite3.Connection,
    table: str,
    *,
    where: Where = EVERYTHING,
    offset: int,
    limit: int,
    time_column: str = "created_at_epoch",
) -> tuple[list[sqlite3.Row], bool]:
    """Rows of ``table`` (aliased as itself) newest first (ties by id), and whether more
    follow."""
    clauses, params = where
    sql_where = " WHERE " + " AND ".join(clauses) if clauses else ""
    rows = conn.execute(
        f"SELECT * FROM {table}{sql_where} ORDER BY {time_column} DESC, id DESC LIMIT ? OFFSET ?",
        [*params, limit + 1, offset],
    ).fetchall()
    return rows[:limit], len(rows) > limit
