"""The injection ledger: what memory was put in front of the agent, and what it asked for later.

Three tables (migration ``m004_injection_ledger``):

- ``injections``: one row per injected block (session, project, kind, estimated tokens, time);
  ``kind`` is ``session_start``, ``prompt``, ``file`` or ``other``;
- ``injection_items``: the observations a block showed, and how (``index`` = a one-line row,
  ``full`` = its content, ``file`` = a file-history line);
- ``fetches``: every observation handed out later on request (``POST /api/observations/batch``
  with a ``source``, e.g. the MCP ``get_observations`` tool).

Together with ``observations.discovery_tokens`` that gives each memory's return on investment:
what it cost to create, how often it was injected, and whether the agent then asked for it.
Rows are written by the service only (the one writer), each record in one transaction. The
reads a SessionStart block needs are in ``ledger_reads`` (stdlib only: the hook runs them too).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from workbench.clock import iso_from_ms, now_ms
from workbench.recall.ledger_reads import InjectionKind, Shown
from workbench.redact import strip_private
from workbench.store import observations
from workbench.store.connection import atomic

MAX_SOURCE_CHARS = 50
HISTORY_ROWS = 100  # injections and fetches listed per observation (totals count all)


def record_injection(
    conn: sqlite3.Connection,
    *,
    kind: InjectionKind,
    tokens: int,
    items: Sequence[tuple[int, Shown]],
    content_session_id: str | None = None,
    project: str | None = None,
    at_ms: int | None = None,
) -> int:
    """Record one injected block and the observations it showed; return the injection id.

    An observation listed twice keeps its first ``shown`` (the primary key is per block).
    """
    ms = at_ms if at_ms is not None else now_ms()
    with atomic(conn):
        cur = conn.execute(
            "INSERT INTO injections (content_session_id, project, kind, tokens, created_at,"
            " created_at_epoch) VALUES (?, ?, ?, ?, ?, ?)",
            (content_session_id or None, project or None, kind, int(tokens), iso_from_ms(ms), ms),
        )
        injection_id = int(cur.lastrowid or 0)
        conn.executemany(
            "INSERT INTO injection_items (injection_id, observation_id, shown) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            [(injection_id, int(obs_id), shown) for obs_id, shown in items],
        )
    return injection_id


def record_fetches(
    conn: sqlite3.Connection,
    observation_ids: Iterable[int],
    *,
    source: str | None,
    content_session_id: str | None = None,
    at_ms: int | None = None,
) -> int:
    """Record that these observations were handed out on request; return the rows written."""
    ms = at_ms if at_ms is not None else now_ms()
    rows = [
        (
            content_session_id or None,
            int(obs_id),
            # Redacted before it is cut (a cut can leave an unclosed ``<private>`` behind).
            strip_private(source or "http")[:MAX_SOURCE_CHARS] or "http",
            iso_from_ms(ms),
            ms,
        )
        for obs_id in observation_ids
    ]
    if not rows:
        return 0
    with atomic(conn):
        conn.executemany(
            "INSERT INTO fetches (content_session_id, observation_id, source, created_at,"
            " created_at_epoch) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    return len(rows)


def history(
    conn: sqlite3.Connection, observation_id: int, rows: int = HISTORY_ROWS
) -> dict[str, Any] | None:
    """How often one observation was injected (by kind, into how many sessions, when) and
    fetched later: totals over the whole ledger, the newest ``rows`` of each; None when the
    observation does not exist. What ``GET /api/observation/{id}/injections`` answers."""
    obs = observations.get(conn, observation_id)
    if obs is None:
        return None
    totals = conn.execute(
        "SELECT count(*) AS n, count(DISTINCT j.content_session_id) AS sessions,"
        " min(j.created_at_epoch) AS first, max(j.created_at_epoch) AS last"
        " FROM injection_items i JOIN injections j ON j.id = i.injection_id"
        " WHERE i.observation_id = ?",
        (observation_id,),
    ).fetchone()
    by_kind = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT j.kind, count(*) FROM injection_items i JOIN injections j"
            " ON j.id = i.injection_id WHERE i.observation_id = ? GROUP BY j.kind",
            (observation_id,),
        )
    }
    recent = conn.execute(
        "SELECT j.id, j.kind, i.shown, j.content_session_id, j.project, j.tokens,"
        " j.created_at FROM injection_items i JOIN injections j ON j.id = i.injection_id"
        " WHERE i.observation_id = ? ORDER BY j.created_at_epoch DESC, j.id DESC LIMIT ?",
        (observation_id, rows),
    ).fetchall()
    fetches = conn.execute(
        "SELECT source, content_session_id, created_at FROM fetches WHERE observation_id = ?"
        " ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        (observation_id, rows),
    ).fetchall()
    fetch_count = conn.execute(
        "SELECT count(*) FROM fetches WHERE observation_id = ?", (observation_id,)
    ).fetchone()[0]
    return {
        "observationId": observation_id,
        "discoveryTokens": obs.discovery_tokens,
        "injected": {
            "count": totals["n"],
            "sessions": totals["sessions"],
            "byKind": by_kind,
            "first": _iso(totals["first"]),
            "last": _iso(totals["last"]),
            "items": [
                {
                    "injectionId": r["id"],
                    "kind": r["kind"],
                    "shown": r["shown"],
                    "contentSessionId": r["content_session_id"],
                    "project": r["project"],
                    "tokens": r["tokens"],
                    "createdAt": r["created_at"],
                }
                for r in recent
            ],
        },
        "fetched": {
            "count": fetch_count,
            "items": [
                {
                    "source": r["source"],
                    "contentSessionId": r["content_session_id"],
                    "createdAt": r["created_at"],
                }
                for r in fetches
            ],
        },
    }


def _iso(ms: int | None) -> str | None:
    return iso_from_ms(ms) if ms else None
