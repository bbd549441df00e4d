"""Stale marks on search hits, timeline items and fetched observations (``workbench.staleness``).

Applied to the page that is returned only (at most a few hundred records), after it is built:
one indexed read of the evidence rows and one ``stat`` per cited file, no git.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from workbench.recall.hits import RecordRef
from workbench.staleness.check import check


def mark_refs(conn: sqlite3.Connection, refs: Iterable[RecordRef]) -> None:
    """Set ``stale``/``stale_files`` on each observation among ``refs`` that has evidence."""
    chosen = [r for r in refs if r.kind == "observation"]
    verdicts = check(conn, [r.id for r in chosen])
    for ref in chosen:
        verdict = verdicts.get(ref.id)
        if verdict is not None:
            ref.stale = verdict.stale
            ref.stale_files = list(verdict.changed)


def marks(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[bool, list[str]]]:
    """``id -> (stale, changed files)`` for each observation id with evidence."""
    return {i: (v.stale, list(v.changed)) for i, v in check(conn, ids).items()}
