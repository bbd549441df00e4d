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
from collections.abc import Iterator, Sequence
from typing import Any

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
    found: dict[int, Row] = {int(r[0]): (r[1], r[2]) for r in _read(conn, missing)}
    if memo is None:
        return found
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
    return {int(r[0]): (str(r[1]), str(r[2])) for r in _read(conn, sorted(set(ids)), where)}


def _read(conn: sqlite3.Connection, ids: list[int], where: str = "") -> Iterator[Any]:
    """``(id, content_session_id, project)`` rows of ``ids`` (and ``where``), in chunks."""
    extra = f" AND {where}" if where else ""
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        sql = (
            "SELECT id, content_session_id, project FROM observations"
            f" WHERE id IN ({', '.join('?' * len(chunk))}){extra}"
        )
        yield from conn.execute(sql, chunk)
