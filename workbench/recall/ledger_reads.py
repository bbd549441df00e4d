"""The two ledger reads a SessionStart block needs, stdlib only.

Split from ``ledger`` (which writes, and imports the store layer and its models) so that the
SessionStart hook can honour ``source`` when it reads the store itself, with the service
cold (``workbench.recall.cold_context``): what a session was already shown, and when it was
last given a block, are the same two queries on both paths.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Literal

InjectionKind = Literal["session_start", "prompt", "file", "other"]
Shown = Literal["index", "full", "file"]


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


def last_injection_ms(
    conn: sqlite3.Connection, content_session_id: str, kind: InjectionKind
) -> int | None:
    """When this session last had a block of ``kind`` (epoch ms), or None when it never did.

    A resumed session is shown only what is new since then (``workbench.recall.resume``).
    """
    if not content_session_id:
        return None
    row = conn.execute(
        "SELECT MAX(created_at_epoch) FROM injections WHERE content_session_id = ? AND kind = ?",
        (content_session_id, kind),
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None
