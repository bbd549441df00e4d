"""Reading the team mirror (``team/mirror.py``): BM25 search and observations by team ref.

The mirror's tables are named like the store's, so ``recall.fts.rank`` and ``SearchFilters``
run on it unchanged: a team search ranks exactly as a local one.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from workbench.team.mirror import COLUMNS, LISTS, MirrorUnavailable, opened

if TYPE_CHECKING:
    from workbench.settings import Settings

HIT_COLUMNS = (
    "author, local_id, project, platform_source, type, title, subtitle, narrative, "
    "content_session_id, prompt_number, created_at, created_at_epoch"
)


def search(
    conn: sqlite3.Connection, query: str | None, filters: Any, *, limit: int
) -> list[dict[str, Any]]:
    """The mirror's best ``limit`` observations for ``query`` under ``filters`` (BM25, the
    store's ranking: ``recall.fts.rank``); newest first when there are no words."""
    from workbench.recall import fts
    from workbench.recall.filters import SearchFilters

    filters = filters or SearchFilters()
    if fts.query_pieces(query):
        scored = fts.rank(conn, "observations", query, filters, limit=limit)
        rows = _rows(conn, [i for i, _ in scored])
        return [dict(rows[i], score=s) for i, s in scored if i in rows]
    clauses, params = filters.observation_sql("o")
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    cur = conn.execute(
        f"SELECT id, {HIT_COLUMNS} FROM observations o{where} "
        "ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        [*params, limit],
    )
    return [dict(_named(cur, row), score=1.0) for row in cur.fetchall()]


def read_search(
    settings: Settings, query: str | None, filters: Any, *, limit: int
) -> list[dict[str, Any]]:
    """``search`` on a connection of its own; a mirror locked by a long rebuild is a 503."""
    try:
        with opened(settings) as conn:
            return search(conn, query, filters, limit=limit)
    except sqlite3.OperationalError as exc:
        raise MirrorUnavailable(
            f"the team mirror cannot be read now ({exc}); another process may be rebuilding "
            "it: try again in a minute, or run `workbench team refresh --rebuild`"
        ) from None


def _rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, Any]]:
    if not ids:
        return {}
    cur = conn.execute(
        f"SELECT id, {HIT_COLUMNS} FROM observations WHERE id IN ({','.join('?' * len(ids))})",
        ids,
    )
    return {row[0]: _named(cur, row) for row in cur.fetchall()}


def _named(cur: sqlite3.Cursor, row: tuple[Any, ...]) -> dict[str, Any]:
    return {d[0]: v for d, v in zip(cur.description, row, strict=True) if d[0] != "id"}


def full_observations(conn: sqlite3.Connection, author: str, local_id: int) -> list[dict[str, Any]]:
    """The live observations ``author`` published under ``local_id`` (two machines of one
    author may share ids), shaped like a local observation plus ``author`` and ``ref``."""
    from workbench.team import refs

    cur = conn.execute(
        f"SELECT {', '.join(c for c in COLUMNS if c != 'content_hash')} FROM observations "
        "WHERE author = ? AND local_id = ? ORDER BY created_at_epoch, content_session_id",
        [author, local_id],
    )
    out = []
    for row in cur.fetchall():
        obs = {d[0]: v for d, v in zip(cur.description, row, strict=True)}
        for name in LISTS:
            obs[name] = json.loads(obs[name] or "[]")
        obs["id"] = obs.pop("local_id")
        obs["ref"] = refs.make(author, obs["id"])
        out.append(obs)
    return out
