"""Colleagues' memories for the SessionStart block, read from the team lake (``team_context``).

Off by default. When on (and a lake is configured), ``GET /api/context/inject`` adds the
newest observations other authors published for the same projects, after the local ones:

- **same budget**: team rows only fill the ``context_observations`` slots the local rows left
  (``slots``), so the block never grows past what the settings allow;
- **labelled and fenced**: each row names its author, inside the same fence as every memory
  (``workbench/recall/context.py`` renders them; the header says they are data);
- **local wins**: your own author's rows are never read (your store has them), and a
  colleague's row whose title matches a local observation of the project is dropped;
- **never tombstoned**: rows with ``deleted_at_epoch`` are excluded in the query;
- **bounded**: the lake gets ``team_context_timeout_s`` in all (libpq's connect timeout and a
  wait on a worker thread); past it, or on any lake error, the local block is served unchanged
  and the reason logged. A thread still waiting on a slow lake is a daemon and ends with it.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.recall.context import TeamRow

if TYPE_CHECKING:
    from workbench.settings import Settings

log = logging.getLogger("workbench.team")

# A colleague's row is a duplicate of a local one when their titles match after this.
_DUP_KEY_CHARS = 200
# Rows read beyond ``limit`` so that duplicates dropped afterwards still leave ``limit``.
OVERFETCH = 20


def enabled(settings: Settings) -> bool:
    return bool(settings.team_context and settings.team_catalog and settings.team_data)


def slots(limit: int, local_rows: int) -> int:
    """How many team rows fit: what the local rows left of ``context_observations``."""
    return max(0, limit - local_rows)


def query_lake(settings: Settings, projects: Sequence[str], limit: int) -> list[TeamRow]:
    """The newest ``limit`` live observations of ``projects`` by other authors (may raise)."""
    from workbench.team import lake

    timeout = max(1, math.ceil(settings.team_context_timeout_s))
    con = lake.connect(settings, create_tables=False, connect_timeout_s=timeout)
    try:
        rows = con.execute(
            f"SELECT author, type, title, project, created_at_epoch FROM {lake.LAKE}.observations"
            " WHERE list_contains(?, project) AND author <> ? AND deleted_at_epoch IS NULL"
            " AND title <> '' ORDER BY created_at_epoch DESC, author, local_id DESC LIMIT ?",
            [list(projects), settings.team_author_id(), limit],
        ).fetchall()
    finally:
        con.close()
    return [TeamRow(str(a), str(t), str(ti), str(p), int(c)) for a, t, ti, p, c in rows]


def _key(title: str) -> str:
    return " ".join(title.casefold().split())[:_DUP_KEY_CHARS]


def drop_local_duplicates(
    conn: sqlite3.Connection, rows: Sequence[TeamRow], local_titles: Sequence[str]
) -> list[TeamRow]:
    """``rows`` minus those whose title a local observation of their project already has."""
    shown = {_key(t) for t in local_titles}
    kept: list[TeamRow] = []
    for row in rows:
        if _key(row.title) in shown:
            continue
        known = conn.execute(
            "SELECT 1 FROM observations WHERE project = ? AND title = ? LIMIT 1",
            (row.project, row.title),
        ).fetchone()
        if known is None:
            kept.append(row)
    return kept


def fetch(
    settings: Settings,
    conn: sqlite3.Connection,
    projects: Sequence[str],
    limit: int,
    local_titles: Sequence[str],
) -> list[TeamRow]:
    """Team rows for the block, or ``[]`` when off, full, slow or failing (never raises)."""
    if not enabled(settings) or limit <= 0:
        return []
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["rows"] = query_lake(settings, projects, limit + OVERFETCH)
        except BaseException as exc:  # noqa: BLE001 - reported below, never to the caller
            box["error"] = exc

    thread = threading.Thread(target=work, name="workbench-team-context", daemon=True)
    thread.start()
    thread.join(settings.team_context_timeout_s)
    if thread.is_alive():
        log.warning(
            "team context skipped: the lake did not answer within %ss (team_context_timeout_s)",
            settings.team_context_timeout_s,
        )
        return []
    if "error" in box:
        error = box["error"]
        log.warning("team context skipped: %s", (str(error).strip() or type(error).__name__))
        return []
    return drop_local_duplicates(conn, box.get("rows", []), local_titles)[:limit]
