"""The tiny fixed memory the analytics tests compute by hand, written with the real store API.

Three observations in two sessions of two projects, one summary, and a small injection ledger.
Token arithmetic (read tokens = ceil(chars of title + subtitle + narrative + facts / 4)):

- o1 alpha feature: 4 + 2 + 10 + (3 + 2) = 21 chars → 6 read tokens; discovery 100
- o2 alpha bugfix:  8 + 0 + 8 + 0       = 16 chars → 4 read tokens; discovery 20
- o3 beta  feature: 1 + 0 + 0 + 1       = 2 chars  → 1 read token;  discovery 0

Times (UTC): session s1 starts 2023-11-14T22:13:20Z (1_700_000_000_000) and is completed 600 s
later; s2 starts 2023-11-16T02:00:00Z (1_700_100_000_000).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.models import ObservationDraft, SummaryDraft
from workbench.recall import ledger
from workbench.store import observations, sessions, summaries
from workbench.store.connection import atomic
from workbench.store.database import Store

T1 = 1_700_000_000_000  # s1 start, 2023-11-14
T2 = 1_700_100_000_000  # s2 start, 2023-11-16

OBSERVATIONS: list[dict[str, Any]] = [
    {
        "content_session_id": "s1",
        "project": "alpha",
        "prompt_number": 1,
        "type": "feature",
        "title": "abcd",
        "subtitle": "ef",
        "narrative": "x" * 10,
        "facts": ["123", "45"],
        "concepts": ["Cache", "loader"],
        "files_read": ["a.py", "b.py"],
        "files_modified": ["a.py"],
        "discovery_tokens": 100,
        "created_at_epoch": T1 + 60_000,
    },
    {
        "content_session_id": "s1",
        "project": "alpha",
        "prompt_number": 2,
        "type": "bugfix",
        "title": "t" * 8,
        "narrative": "n" * 8,
        "concepts": ["cache", "lock", "loader"],
        "files_read": ["a.py"],
        "files_modified": ["c.py"],
        "discovery_tokens": 20,
        "created_at_epoch": T1 + 120_000,
    },
    {
        "content_session_id": "s2",
        "project": "beta",
        "prompt_number": 1,
        "type": "feature",
        "title": "q",
        "facts": ["z"],
        "concepts": ["lock", "cache", "Cache"],
        "files_modified": ["a.py"],
        "discovery_tokens": 0,
        "created_at_epoch": T2 + 60_000,
    },
]
_DRAFT_FIELDS = set(ObservationDraft.model_fields)


def seed(path: Path, *, with_ledger: bool = True) -> Store:
    """Create the store at ``path`` holding the fixed memory; return it (caller closes)."""
    store = Store(path)
    conn = store.conn
    with atomic(conn):
        s1 = sessions.ensure(conn, "s1", "alpha", at_ms=T1)
        sessions.record_prompt(conn, s1, "add a cache", T1 + 1_000)
        sessions.record_prompt(conn, sessions.get(conn, "s1"), "lock it", T1 + 100_000)
        sessions.end(conn, "s1", "completed", T1 + 600_000)
        s2 = sessions.ensure(conn, "s2", "beta", at_ms=T2)
        sessions.record_prompt(conn, s2, "why is CI red", T2 + 1_000)
        ids = [
            observations.insert(
                conn,
                ObservationDraft(**{k: v for k, v in row.items() if k in _DRAFT_FIELDS}),
                content_session_id=row["content_session_id"],
                project=row["project"],
                prompt_number=row["prompt_number"],
                discovery_tokens=row["discovery_tokens"],
                created_ms=row["created_at_epoch"],
            )[0]
            for row in OBSERVATIONS
        ]
        summaries.upsert(
            conn,
            SummaryDraft(request="add a cache", files_edited=["a.py"]),
            content_session_id="s1",
            project="alpha",
            prompt_number=1,
            discovery_tokens=7,
            created_ms=T1 + 300_000,
        )
    if with_ledger:
        o1, o2, o3 = ids
        record = ledger.record_injection
        record(
            conn,
            kind="session_start",
            tokens=50,
            items=[(o1, "index"), (o2, "index")],
            content_session_id="s1",
            project="alpha",
            at_ms=T1 + 200_000,
        )
        record(
            conn,
            kind="prompt",
            tokens=30,
            items=[(o1, "full")],
            content_session_id="s1",
            project="alpha",
            at_ms=T1 + 250_000,
        )
        record(
            conn,
            kind="session_start",
            tokens=40,
            items=[(o1, "index")],
            content_session_id="s2",
            project="beta",
            at_ms=T2 + 70_000,
        )
        fetch = ledger.record_fetches
        fetch(conn, [o1], source="mcp", content_session_id="s1", at_ms=T1 + 210_000)  # after
        fetch(conn, [o2], source="mcp", content_session_id="s1", at_ms=T1 + 150_000)  # before
        fetch(conn, [o1], source="mcp", content_session_id="s2", at_ms=T2 + 80_000)  # after
        fetch(conn, [o3], source="http", at_ms=T2 + 90_000)  # no session
    return store


def export_document() -> dict[str, Any]:
    """The same sessions, prompts, observations and summary as a ``workbench-export`` file."""
    return {
        "format": "workbench-export",
        "version": 1,
        "sessions": [
            {
                "content_session_id": "s1",
                "project": "alpha",
                "status": "completed",
                "started_at_epoch": T1,
                "completed_at": "2023-11-14T22:23:20.000Z",
                "completed_at_epoch": T1 + 600_000,
                "prompt_counter": 2,
            },
            {
                "content_session_id": "s2",
                "project": "beta",
                "status": "active",
                "started_at_epoch": T2,
                "prompt_counter": 1,
            },
        ],
        "prompts": [
            {
                "content_session_id": "s1",
                "project": "alpha",
                "prompt_number": 1,
                "prompt_text": "add a cache",
                "created_at_epoch": T1 + 1_000,
            },
            {
                "content_session_id": "s1",
                "project": "alpha",
                "prompt_number": 2,
                "prompt_text": "lock it",
                "created_at_epoch": T1 + 100_000,
            },
            {
                "content_session_id": "s2",
                "project": "beta",
                "prompt_number": 1,
                "prompt_text": "why is CI red",
                "created_at_epoch": T2 + 1_000,
            },
        ],
        "observations": OBSERVATIONS,
        "summaries": [
            {
                "content_session_id": "s1",
                "project": "alpha",
                "prompt_number": 1,
                "request": "add a cache",
                "files_edited": ["a.py"],
                "discovery_tokens": 7,
                "created_at_epoch": T1 + 300_000,
            }
        ],
    }


# ----- the hand-computed answers ---------------------------------------------------------------
ECONOMICS_BY_PROJECT = [
    {
        "project": "alpha",
        "observations": 2,
        "read_tokens": 10,
        "discovery_tokens": 120,
        "saved_tokens": 110,
        "savings_pct": 91.67,
    },  # 100 * (1 - 10/120)
    {
        "project": "beta",
        "observations": 1,
        "read_tokens": 1,
        "discovery_tokens": 0,
        "saved_tokens": -1,
        "savings_pct": None,
    },  # nothing spent: no percentage
]
ECONOMICS_SUMMARY = {
    "observations": 3,
    "read_tokens": 11,
    "discovery_tokens": 120,
    "saved_tokens": 109,
    "savings_pct": 90.83,  # 100 * (1 - 11/120) = 90.8333…
}
