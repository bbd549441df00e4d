"""Counts for ``/api/stats``, ``/api/projects`` and ``workbench status``: cheap aggregate SQL."""

from __future__ import annotations

import sqlite3
from typing import Any

from workbench.clock import iso_from_ms
from workbench.store import events

TABLES = {
    "sessions": "sessions",
    "prompts": "user_prompts",
    "observations": "observations",
    "summaries": "session_summaries",
    "events": "events",
}


def totals(conn: sqlite3.Connection) -> dict[str, int]:
    """Row counts of the canonical tables."""
    return {
        name: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        for name, table in TABLES.items()
    }


def projects(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project with its counts and last activity, most recent first."""
    rows = conn.execute(
        """
        WITH names AS (
            SELECT project FROM sessions UNION SELECT project FROM observations
        )
        SELECT n.project,
               (SELECT count(*) FROM observations o WHERE o.project = n.project) AS observations,
               (SELECT count(*) FROM sessions s WHERE s.project = n.project) AS sessions,
               (SELECT count(*) FROM session_summaries m WHERE m.project = n.project)
                   AS summaries,
               max(coalesce((SELECT max(created_at_epoch) FROM observations o
                             WHERE o.project = n.project), 0),
                   coalesce((SELECT max(started_at_epoch) FROM sessions s
                             WHERE s.project = n.project), 0)) AS last_ms
        FROM names n ORDER BY last_ms DESC, n.project
        """
    ).fetchall()
    return [
        {
            "name": r["project"],
            "observations": r["observations"],
            "sessions": r["sessions"],
            "summaries": r["summaries"],
            "lastActivity": iso_from_ms(r["last_ms"]) if r["last_ms"] else None,
        }
        for r in rows
    ]


def type_breakdown(conn: sqlite3.Connection) -> dict[str, int]:
    return {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT type, count(*) FROM observations GROUP BY type ORDER BY count(*) DESC"
        )
    }


def platform_breakdown(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """Sessions and observations per agent platform (``platform_source``), most sessions first.

    Only platforms with rows appear; the viewer's platform filter is fed from it.
    """
    counts: dict[str, dict[str, int]] = {}
    for table in ("sessions", "observations"):
        for name, count in conn.execute(
            f"SELECT platform_source, count(*) FROM {table} GROUP BY platform_source"
        ):
            counts.setdefault(name, {"sessions": 0, "observations": 0})[table] = int(count)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1]["sessions"], kv[0])))


def overview(conn: sqlite3.Connection) -> dict[str, Any]:
    """Everything ``/api/stats`` reports about the store itself."""
    page_count = conn.execute("PRAGMA page_count").fetchone()[0]
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    return {
        "totals": totals(conn),
        "types": type_breakdown(conn),
        "platforms": platform_breakdown(conn),
        "queue": events.depth(conn),
        "failed": events.failed(conn, limit=20),
        "dbSizeBytes": int(page_count) * int(page_size),
    }
