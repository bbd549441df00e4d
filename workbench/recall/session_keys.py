"""Each observation id's session and project: the key that says two hits are one conversation.

The neighbour lift (``fusion.neighbours``), the session term (``session_term.sessions_of``)
and the learned stage's session features (``rerank_learned``) all need it for a list of ids;
they read it here so they cannot drift apart.

Within one search (``fts.one_search``) each id is read once: the neighbour lift looks up its
contenders and the ids beside them, and the learned stage then asks for the fused head and
the ids beside those, nearly the same rows (two primary-key lookups of ~90 rows each at
100k memories, ~0.3 ms a search).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from workbench.recall import fts

CHUNK = 500  # SQLite caps host parameters
Row = tuple[str | None, str]  # (content_session_id, project) as stored


def session_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Row]:
    """``id -> (session, project)`` as stored (the session may be None), for the ids among
    ``ids`` that name an observation. In a ``one_search`` block an id already read (or found
    absent) is not read again."""
    memo = fts.search_memo(("", "session rows", str(id(conn))))
    unique = sorted(set(ids))
    missing = unique if memo is None else [i for i in unique if i not in memo]
    found: dict[int, Row | None] = {}
    for start in range(0, len(missing), CHUNK):
        chunk = missing[start : start + CHUNK]
        sql = (
            "SELECT id, content_session_id, project FROM observations"
            f" WHERE id IN ({', '.join('?' * len(chunk))})"
        )
        for row in conn.execute(sql, chunk):
            found[int(row[0])] = (row[1], row[2])
    if memo is None:
        return {i: row for i, row in found.items() if row is not None}
    for i in missing:
        memo[i] = found.get(i)
    return {i: row for i in unique if (row := memo[i]) is not None}


def session_keys(
    conn: sqlite3.Connection, ids: Sequence[int], where: str = ""
) -> dict[int, tuple[str, str]]:
    """``id -> (session, project)`` for the observations among ``ids`` (once each).

    ``where``: extra SQL conditions ANDed on (e.g. only turns that have a session). With none,
    a row with no session keys as ``"None"``: it still differs from every real session.
    """
    if not where:
        return {i: (str(s), str(p)) for i, (s, p) in session_rows(conn, ids).items()}
    unique = sorted(set(ids))
    out: dict[int, tuple[str, str]] = {}
    for start in range(0, len(unique), CHUNK):
        chunk = unique[start : start + CHUNK]
        sql = (
            "SELECT id, content_session_id, project FROM observations"
            f" WHERE id IN ({', '.join('?' * len(chunk))}) AND {where}"
        )
        for row in conn.execute(sql, chunk):
            out[int(row[0])] = (str(row[1]), str(row[2]))
    return out
