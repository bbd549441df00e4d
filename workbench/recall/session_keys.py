"""Each observation id's session and project: the key that says two hits are one conversation.

The neighbour lift (``fusion.neighbours``) and the session term (``session_term.sessions_of``)
both need it for a page of ids; one chunked lookup serves both so they cannot drift apart.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

CHUNK = 500  # SQLite caps host parameters


def session_keys(
    conn: sqlite3.Connection, ids: Sequence[int], where: str = ""
) -> dict[int, tuple[str, str]]:
    """``id -> (session, project)`` for the observations among ``ids`` (once each).

    ``where``: extra SQL conditions ANDed on (e.g. only turns that have a session). With none,
    a row with no session keys as ``"None"``: it still differs from every real session.
    """
    unique = sorted(set(ids))
    extra = f" AND {where}" if where else ""
    out: dict[int, tuple[str, str]] = {}
    for start in range(0, len(unique), CHUNK):
        chunk = unique[start : start + CHUNK]
        sql = (
            "SELECT id, content_session_id, project FROM observations"
            f" WHERE id IN ({', '.join('?' * len(chunk))}){extra}"
        )
        for row in conn.execute(sql, chunk):
            out[int(row[0])] = (str(row[1]), str(row[2]))
    return out
