"""The stale list (``workbench stale``, ``POST /api/stale``), recorded for DuckDB.

Checks every observation with evidence (of one project, or all), newest first, and records
each verdict in ``observation_staleness`` (derived: the next check replaces it), so the
read-only ``staleness`` view of ``workbench sql`` sees the last check without reading files.
With ``commits``, each stale item also lists the commits since its recorded commit that
touched its changed files (one ``git log`` per stale item, at most ``COMMITS_FOR``).
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field

from workbench.clock import now_ms
from workbench.models import StaleObservation
from workbench.staleness import gitrepo
from workbench.staleness.check import Staleness, check, has_table
from workbench.store.connection import atomic

COMMITS_FOR = 100


@dataclass
class StaleReport:
    checked: int = 0
    stale: int = 0  # all stale ones (``items`` holds the newest ``limit``)
    items: list[StaleObservation] = field(default_factory=list)


def _evidence_ids(conn: sqlite3.Connection, project: str | None) -> list[int]:
    scope = " AND o.project = ?" if project else ""
    params = (project,) if project else ()
    rows = conn.execute(
        "SELECT o.id FROM observations o WHERE o.id IN"
        f" (SELECT DISTINCT observation_id FROM observation_evidence){scope}"
        " ORDER BY o.created_at_epoch DESC, o.id DESC",
        params,
    )
    return [int(r[0]) for r in rows]


def run(
    conn: sqlite3.Connection,
    *,
    project: str | None = None,
    limit: int = 500,
    commits: bool = False,
) -> StaleReport:
    """Check, record the verdicts, and list the newest ``limit`` stale observations."""
    if not has_table(conn):
        return StaleReport()
    ids = _evidence_ids(conn, project)
    verdicts = check(conn, ids)
    _record(conn, verdicts, ids, project)
    every = [i for i in ids if i in verdicts and verdicts[i].stale]
    stale_ids = every[:limit]
    report = StaleReport(checked=len(ids), stale=len(every))
    if not stale_ids:
        return report
    marks = ",".join("?" * len(stale_ids))
    rows = {
        int(r[0]): r
        for r in conn.execute(
            "SELECT o.id, o.project, o.type, o.title, o.created_at, o.created_at_epoch,"
            " (SELECT e.repo_root FROM observation_evidence e WHERE e.observation_id = o.id"
            "  AND e.repo_root IS NOT NULL ORDER BY e.path LIMIT 1),"
            " (SELECT e.git_commit FROM observation_evidence e WHERE e.observation_id = o.id"
            "  AND e.git_commit IS NOT NULL ORDER BY e.path LIMIT 1)"
            f" FROM observations o WHERE o.id IN ({marks})",
            stale_ids,
        )
    }
    for n, obs_id in enumerate(stale_ids):
        row = rows.get(obs_id)
        if row is None:
            continue
        item = StaleObservation(
            id=obs_id,
            project=str(row[1]),
            type=str(row[2]),
            title=str(row[3]),
            created_at=str(row[4]),
            created_at_epoch=int(row[5]),
            changed_files=list(verdicts[obs_id].changed),
            repo_root=row[6],
            git_commit=row[7],
            commits=[],
        )
        if commits and n < COMMITS_FOR and item.repo_root and item.git_commit:
            item.commits = _commits(conn, item)
        report.items.append(item)
    return report


def _commits(conn: sqlite3.Connection, item: StaleObservation) -> list[str]:
    """Commits since the recorded one that touched the item's changed files (in its repo)."""
    root, commit = item.repo_root or "", item.git_commit or ""
    found: list[str] = []
    for path in item.changed_files:
        row = conn.execute(
            "SELECT abs_path FROM observation_evidence WHERE observation_id = ? AND path = ?",
            (item.id, path),
        ).fetchone()
        if row is None:
            continue
        rel = os.path.relpath(str(row[0]), root)
        if rel.startswith(".."):
            continue
        for line in gitrepo.commits_since(root, commit, rel):
            if line not in found:
                found.append(line)
    return found


def _record(
    conn: sqlite3.Connection,
    verdicts: dict[int, Staleness],
    ids: list[int],
    project: str | None,
) -> None:
    """Replace the recorded verdicts of what was checked (all of them without a project)."""
    now = now_ms()
    rows = []
    for obs_id in ids:
        verdict = verdicts.get(obs_id)
        changed = list(verdict.changed) if verdict is not None else []
        rows.append((obs_id, int(bool(changed)), json.dumps(changed), now))
    with atomic(conn):
        if project is None:
            conn.execute("DELETE FROM observation_staleness")
        conn.executemany(
            "INSERT OR REPLACE INTO observation_staleness"
            " (observation_id, stale, changed_files, checked_at_epoch) VALUES (?, ?, ?, ?)",
            rows,
        )
