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
Rows are written by the service only (the one writer), each record in one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Literal

from workbench.clock import iso_from_ms, now_ms
from workbench.store.connection import atomic

InjectionKind = Literal["session_start", "prompt", "file", "other"]
Shown = Literal["index", "full", "file"]
MAX_SOURCE_CHARS = 50


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
            (source or "http")[:MAX_SOURCE_CHARS],
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


def injected_ids(
    conn: sqlite3.Connection, content_session_id: str, kinds: Sequence[InjectionKind]
) -> set[int]:
    """Observation ids already injected into this session by blocks of ``kinds``.

    Lets the prompt injection avoid repeating the same memories prompt after prompt; bounded
    by one session's injections (indexed on ``content_session_id``).
    """
    if not content_session_id or not kinds:
        return set()
    rows = conn.execute(
        "SELECT DISTINCT i.observation_id FROM injections j"
        " JOIN injection_items i ON i.injection_id = j.id"
        f" WHERE j.content_session_id = ? AND j.kind IN ({','.join('?' * len(kinds))})",
        (content_session_id, *kinds),
    )
    return {int(r[0]) for r in rows}
