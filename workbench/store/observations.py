"""Observations: insert with content-hash dedup, fetch by id(s), list newest first.

Dedup rule: the content hash of (session, title, narrative) is UNIQUE, so a second identical
observation returns the existing id and writes nothing, however much later it comes (a spool
replay, a hook retry, a recompress that reproduces the same result).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from workbench.clock import iso_from_ms, now_ms
from workbench.models import Observation, ObservationDraft
from workbench.platforms import DEFAULT_PLATFORM_SOURCE
from workbench.store import pages

JSON_FIELDS = ("facts", "concepts", "files_read", "files_modified")
OrderBy = Literal["date_desc", "date_asc", "id_asc", "id_desc"]
_ORDER_SQL = {
    "date_desc": "created_at_epoch DESC, id DESC",
    "date_asc": "created_at_epoch ASC, id ASC",
    "id_desc": "id DESC",
    "id_asc": "id ASC",
}


def content_hash(content_session_id: str | None, title: str, narrative: str) -> str:
    """sha256 over the dedup key; the unit separator keeps ``("a b", "")`` ≠ ``("a", "b")``."""
    key = "\x1f".join((content_session_id or "", title.strip(), narrative.strip()))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def from_row(row: sqlite3.Row) -> Observation:
    data = dict(row)
    for name in JSON_FIELDS:
        data[name] = json.loads(data[name])
    data.pop("session_id", None)
    return Observation(**data)


def insert(
    conn: sqlite3.Connection,
    draft: ObservationDraft,
    *,
    content_session_id: str | None,
    project: str,
    prompt_number: int = 0,
    event_id: int | None = None,
    discovery_tokens: int = 0,
    generated_by: str = "offline",
    agent_id: str | None = None,
    agent_type: str | None = None,
    created_ms: int | None = None,
    project_key: str | None = None,
    platform_source: str | None = None,
) -> tuple[int, bool]:
    """Store one observation; return ``(id, created)``. Call inside ``atomic()``.

    ``project_key``: set only when given (a memory saved by hand from a known folder); else
    a trigger copies the session's key, or the project name (m012). ``platform_source``:
    the agent of an observation with no session (a memory saved through its MCP server);
    a session's own platform always wins.
    """
    digest = content_hash(content_session_id, draft.title, draft.narrative)
    ms = created_ms if created_ms is not None else now_ms()
    session_row = (
        conn.execute(
            "SELECT id, platform_source FROM sessions WHERE content_session_id = ?",
            (content_session_id,),
        ).fetchone()
        if content_session_id
        else None
    )
    cur = conn.execute(
        "INSERT INTO observations (session_id, content_session_id, event_id, project,"
        " prompt_number, type, title, subtitle, narrative, facts, concepts, files_read,"
        " files_modified, discovery_tokens, created_at, created_at_epoch, content_hash,"
        " generated_by, agent_id, agent_type)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (content_hash) DO NOTHING",
        (
            session_row[0] if session_row else None,
            content_session_id,
            event_id,
            project,
            prompt_number,
            draft.type,
            draft.title,
            draft.subtitle,
            draft.narrative,
            *(json.dumps(getattr(draft, name), ensure_ascii=False) for name in JSON_FIELDS),
            discovery_tokens,
            iso_from_ms(ms),
            ms,
            digest,
            generated_by,
            agent_id,
            agent_type,
        ),
    )
    platform = session_row[1] if session_row else platform_source
    if cur.rowcount and platform and platform != DEFAULT_PLATFORM_SOURCE:
        # Trigger: the session (or the saving MCP server) is another agent's (m010). / Why:
        # the column's default says Claude Code, and the INSERT stays the one every schema
        # since m001 accepts (tests write through it on partly migrated stores). / Outcome:
        # one UPDATE, other agents only.
        conn.execute(
            "UPDATE observations SET platform_source = ? WHERE id = ?",
            (platform, cur.lastrowid),
        )
    if cur.rowcount and project_key:
        conn.execute(
            "UPDATE observations SET project_key = ? WHERE id = ?", (project_key, cur.lastrowid)
        )
    if cur.rowcount:
        return int(cur.lastrowid or 0), True
    row = conn.execute("SELECT id FROM observations WHERE content_hash = ?", (digest,)).fetchone()
    return int(row[0]), False


def get(conn: sqlite3.Connection, observation_id: int) -> Observation | None:
    row = conn.execute("SELECT * FROM observations WHERE id = ?", (observation_id,)).fetchone()
    return from_row(row) if row else None


def get_many(
    conn: sqlite3.Connection,
    ids: Sequence[int],
    *,
    order_by: OrderBy = "date_desc",
    limit: int | None = None,
    project: str | None = None,
) -> list[Observation]:
    """Observations for ``ids`` (unknown ids are simply absent), in ``order_by`` order."""
    if not ids:
        return []
    unique = list(dict.fromkeys(int(i) for i in ids))
    results: list[Observation] = []
    # SQLite caps host parameters; chunk so a long id list never fails.
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        sql = f"SELECT * FROM observations WHERE id IN ({','.join('?' * len(chunk))})"
        params: list[Any] = list(chunk)
        if project:
            sql += " AND project = ?"
            params.append(project)
        results.extend(from_row(r) for r in conn.execute(sql, params))
    key = {
        "date_desc": lambda o: (-o.created_at_epoch, -o.id),
        "date_asc": lambda o: (o.created_at_epoch, o.id),
        "id_desc": lambda o: -o.id,
        "id_asc": lambda o: o.id,
    }[order_by]
    results.sort(key=key)
    return results[:limit] if limit else results


def list_page(
    conn: sqlite3.Connection,
    *,
    where: pages.Where = pages.EVERYTHING,
    offset: int,
    limit: int,
) -> tuple[list[Observation], bool]:
    """A page of observations, newest first, and whether more follow."""
    rows, more = pages.newest(
        conn,
        "observations",
        where=where,
        offset=offset,
        limit=limit,
    )
    return [from_row(r) for r in rows], more


def for_prompt(
    conn: sqlite3.Connection, content_session_id: str, prompt_number: int
) -> list[Observation]:
    """The observations of one prompt, oldest first (what a summary digests)."""
    rows = conn.execute(
        "SELECT * FROM observations WHERE content_session_id = ? AND prompt_number = ? ORDER BY id",
        (content_session_id, prompt_number),
    )
    return [from_row(r) for r in rows]


def for_event(conn: sqlite3.Connection, event_id: int) -> list[Observation]:
    return [
        from_row(r)
        for r in conn.execute(
            "SELECT * FROM observations WHERE event_id = ? ORDER BY id", (event_id,)
        )
    ]


def delete_ids(conn: sqlite3.Connection, ids: Iterable[int]) -> int:
    """Delete observations (FTS follows through its trigger). Call inside ``atomic()``."""
    wanted = list(ids)
    if not wanted:
        return 0
    return conn.execute(
        f"DELETE FROM observations WHERE id IN ({','.join('?' * len(wanted))})", wanted
    ).rowcount


def to_public(obs: Observation) -> dict[str, Any]:
    """The JSON shape clients get (snake_case fields, as stored)."""
    return obs.model_dump()
