"""This machine's rows as the lake will hold them: read-only from SQLite, re-redacted, hashed.

Why re-redact: the service already strips ``<private>`` blocks before it stores anything, but
a row written by an older version, an import or the store API directly may still hold one, and
publishing is the one moment text leaves the machine. ``team_text`` strips every block
``workbench.redact`` knows, and then, stricter than local storage, cuts an *unclosed* private
tag and everything after it (locally an unclosed tag keeps the text; shared, it must not).

Which rows: only ``projects`` (the allowlist, checked by the caller), newer than each table's
high-water mark (``Marks``), and created at or after ``since`` when given:

- ``observations``: mark = local ``id`` (observations are append-only; ids only grow).
- ``summaries``: mark = ``updated_at_epoch`` (ms, the time of the last write; m011), and rows
  at or after it are re-read: a summary re-written in place (same prompt summarised again, or
  ``recompress``) keeps its id but is read again, and its new version (new content hash)
  supersedes the old one in the lake (``workbench/team/publish.py``).
- ``sessions``: mark = the newest of ``started_at_epoch``/``completed_at_epoch`` (ms) seen, and
  rows at or after it are re-read: a session that ends is published again as a new version
  (new content hash); readers take the newest version per (author, session).
- ``tombstones``: mark = ``deleted_at_epoch`` (ms) of ``deleted_observations``, re-read from
  the mark on; applying one twice changes nothing.

The content hash is sha256 over the author, the table and every published field except
``published_at_epoch``, so the same row published twice has the same hash.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from workbench.redact import may_hold_tag, strip_private
from workbench.store import connection

TABLES = ("sessions", "observations", "summaries")
OBSERVATION_TEXT = ("type", "title", "subtitle", "narrative", "generated_by")
OBSERVATION_LISTS = ("facts", "concepts", "files_read", "files_modified")
SUMMARY_TEXT = ("request", "investigated", "learned", "completed", "next_steps", "notes")
SUMMARY_LISTS = ("files_read", "files_edited")
_UNCLOSED_PRIVATE = re.compile(r"<\s*private\b", re.IGNORECASE)


def team_text(text: str) -> str:
    """``strip_private``, then cut an unclosed ``<private`` tag and all that follows it."""
    if not may_hold_tag(text):  # no tag at all: what strip_private returns, without its scans
        return text.strip()
    cleaned = strip_private(text)
    match = _UNCLOSED_PRIVATE.search(cleaned)
    return cleaned[: match.start()].rstrip() if match else cleaned


def team_list(raw: str | None) -> list[str]:
    """A JSON array column as a list of redacted strings (empty ones dropped)."""
    try:
        values = json.loads(raw or "[]")
    except ValueError:
        return []
    if not isinstance(values, list):
        return []
    out = [team_text(v if isinstance(v, str) else json.dumps(v)) for v in values]
    return [v for v in out if v]


def content_hash(author: str, table: str, row: dict[str, Any]) -> str:
    body = {k: v for k, v in row.items() if k not in ("content_hash", "published_at_epoch")}
    text = json.dumps([author, table, body], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Marks:
    """High-water marks read from the lake: ``(table, project) -> mark`` (0 when none)."""

    values: dict[tuple[str, str], int] = field(default_factory=dict)

    def get(self, table: str, project: str) -> int:
        return self.values.get((table, project), 0)


def open_store(path: str) -> sqlite3.Connection:
    """The store, read-only (the service stays the one writer), with the store's policy."""
    return connection.connect(path, readonly=True)


def sessions(
    conn: sqlite3.Connection, author: str, project: str, mark: int, since: int
) -> Iterator[dict[str, Any]]:
    rows = conn.execute(
        "SELECT * FROM sessions WHERE project = ?"
        " AND max(started_at_epoch, coalesce(completed_at_epoch, 0)) >= ?"
        " AND started_at_epoch >= ? ORDER BY id",
        (project, mark, since),
    )
    for r in rows:
        row = {
            "author": author,
            "local_id": r["id"],
            "content_session_id": r["content_session_id"],
            "project": r["project"],
            "platform_source": r["platform_source"],
            "status": r["status"],
            "started_at": r["started_at"],
            "started_at_epoch": r["started_at_epoch"],
            "completed_at": r["completed_at"],
            "completed_at_epoch": r["completed_at_epoch"],
            "prompt_counter": r["prompt_counter"],
        }
        row["content_hash"] = content_hash(author, "sessions", row)
        row["_mark"] = max(r["started_at_epoch"], r["completed_at_epoch"] or 0)
        yield row


def _memory_row(
    r: sqlite3.Row, author: str, text_keys: tuple[str, ...], list_keys: tuple[str, ...]
) -> dict[str, Any]:
    """The fields observations and summaries share, redacted for the team (each table adds
    its own after these; every field counts in the content hash)."""
    row: dict[str, Any] = {
        "author": author,
        "local_id": r["id"],
        "content_session_id": r["content_session_id"],
        "project": r["project"],
        "platform_source": r["platform_source"],
        "prompt_number": r["prompt_number"],
    }
    row.update({k: team_text(r[k] or "") for k in text_keys})
    row.update({k: team_list(r[k]) for k in list_keys})
    row["discovery_tokens"] = r["discovery_tokens"]
    row["created_at"] = r["created_at"]
    row["created_at_epoch"] = r["created_at_epoch"]
    return row


def observations(
    conn: sqlite3.Connection, author: str, project: str, mark: int, since: int
) -> Iterator[dict[str, Any]]:
    rows = conn.execute(
        "SELECT * FROM observations WHERE project = ? AND id > ? AND created_at_epoch >= ?"
        " ORDER BY id",
        (project, mark, since),
    )
    for r in rows:
        row = _memory_row(r, author, OBSERVATION_TEXT, OBSERVATION_LISTS)
        row["deleted_at_epoch"] = None
        row["content_hash"] = content_hash(author, "observations", row)
        row["_mark"] = r["id"]
        yield row


def summaries(
    conn: sqlite3.Connection, author: str, project: str, mark: int, since: int
) -> Iterator[dict[str, Any]]:
    rows = conn.execute(
        "SELECT m.*, coalesce(s.platform_source, 'claude-code') AS platform_source"
        " FROM session_summaries AS m LEFT JOIN sessions AS s"
        " ON s.content_session_id = m.content_session_id"
        " WHERE m.project = ? AND m.updated_at_epoch >= ? AND m.created_at_epoch >= ?"
        " ORDER BY m.id",
        (project, mark, since),
    )
    for r in rows:
        row = _memory_row(r, author, SUMMARY_TEXT, SUMMARY_LISTS)
        row["generated_by"] = r["generated_by"]
        row["content_hash"] = content_hash(author, "summaries", row)
        row["_mark"] = r["updated_at_epoch"]
        yield row


def tombstones(
    conn: sqlite3.Connection, project: str, mark: int
) -> list[tuple[int, str | None, int]]:
    """``(observation_id, content_session_id, deleted_at_epoch)`` of observations forgotten at
    or after ``mark``."""
    return [
        (int(r[0]), r[1], int(r[2]))
        for r in conn.execute(
            "SELECT observation_id, content_session_id, deleted_at_epoch"
            " FROM deleted_observations WHERE project = ? AND deleted_at_epoch >= ?"
            " ORDER BY deleted_at_epoch",
            (project, mark),
        )
    ]


def count_candidates(
    conn: sqlite3.Connection, table: str, project: str, mark: int, since: int
) -> int:
    """How many rows a run will read for the progress bar (cheap: indexed counts)."""
    if table == "sessions":
        sql = (
            "SELECT count(*) FROM sessions WHERE project = ?"
            " AND max(started_at_epoch, coalesce(completed_at_epoch, 0)) >= ?"
            " AND started_at_epoch >= ?"
        )
    elif table == "summaries":
        sql = (
            "SELECT count(*) FROM session_summaries WHERE project = ?"
            " AND updated_at_epoch >= ? AND created_at_epoch >= ?"
        )
    else:
        sql = (
            "SELECT count(*) FROM observations WHERE project = ? AND id > ?"
            " AND created_at_epoch >= ?"
        )
    return int(conn.execute(sql, (project, mark, since)).fetchone()[0])


Key = tuple[int, str | None]  # (local id, content_session_id): one machine's row


def observation_keys(conn: sqlite3.Connection, projects: list[str]) -> tuple[set[Key], set[str]]:
    """The ``(id, session)`` of the observations ``projects`` still hold or forgot (those get
    tombstones), and the sessions this store holds.

    Why sessions: an author's rows published from another machine (or by this store before it
    was restored elsewhere) are not in this store, and must not look gone. A lake row is this
    store's own when its session is one of this store's sessions.
    """
    marks = ",".join("?" * len(projects))
    keys = {
        (int(r[0]), r[1])
        for r in conn.execute(
            f"SELECT id, content_session_id FROM observations WHERE project IN ({marks})"
            " UNION ALL SELECT observation_id, content_session_id FROM deleted_observations"
            f" WHERE project IN ({marks})",
            [*projects, *projects],
        )
    }
    sessions = {s for _, s in keys if s is not None}
    sessions.update(r[0] for r in conn.execute("SELECT content_session_id FROM sessions"))
    return keys, sessions


READERS = {"sessions": sessions, "observations": observations, "summaries": summaries}
