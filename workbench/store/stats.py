"""Counts for ``/api/stats``, ``/api/projects`` and ``workbench status``: cheap aggregate SQL."""

from __future__ import annotations

import sqlite3
from typing import Any, TypedDict

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
    folders = project_folders(conn)
    return [
        {
            "name": r["project"],
            "observations": r["observations"],
            "sessions": r["sessions"],
            "summaries": r["summaries"],
            "lastActivity": iso_from_ms(r["last_ms"]) if r["last_ms"] else None,
            "folders": folders.get(r["project"], []),
        }
        for r in rows
    ]


def project_folders(conn: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    """Per project name, the folders (keys, m012) it stands for, most sessions first.

    Two checkouts named ``api`` are two projects sharing a name: each folder gets a label
    that tells them apart (``api (…/clientA/api)``), which the viewer and ``status`` show.
    """
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for table, counted in (("sessions", "sessions"), ("observations", "observations")):
        for name, key, count in conn.execute(
            f"SELECT project, coalesce(project_key, project), count(*) FROM {table} GROUP BY 1, 2"
        ):
            entry = found.setdefault(
                (str(name), str(key)), {"key": str(key), "sessions": 0, "observations": 0}
            )
            entry[counted] = int(count)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for (name, _), entry in found.items():
        by_name.setdefault(name, []).append(entry)
    for name, entries in by_name.items():
        entries.sort(key=lambda e: (-e["sessions"], -e["observations"], e["key"]))
        for entry in entries:
            entry["label"] = folder_label(name, entry["key"], shared=len(entries) > 1)
    return by_name


def folder_label(name: str, key: str, *, shared: bool) -> str:
    """``name`` alone, or ``name (…/parent/folder)`` when other folders share the name."""
    if not shared:
        return name
    if key == name:
        return f"{name} (folder not recorded)"
    tail = "/".join(key.rstrip("/").split("/")[-2:])
    return f"{name} (…/{tail})"


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


class Overview(TypedDict):
    """The store's part of ``/api/stats`` (wire names): typed so the route builds its model
    field by field and ``workbench status`` prints the same keys."""

    totals: dict[str, int]
    types: dict[str, int]
    platforms: dict[str, dict[str, int]]
    queue: dict[str, int]
    failed: list[dict[str, Any]]
    dbSizeBytes: int


def overview(conn: sqlite3.Connection) -> Overview:
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
