"""The timeline around an anchor (layer 2 of search → timeline → fetch).

The anchor is an observation id (``123``, ``"123"``, ``"#123"``), a summary id (``"S12"``), an
ISO timestamp, or — with ``query`` instead — the best hybrid hit for that query (the search's
first observation hit; reused from a search of the same query a moment before when nothing it
depends on changed since: ``recall.anchor_memo``).

``depth_before``/``depth_after`` count *observations* on each side of the anchor; the session
summaries and prompts that fall inside that window of time are interleaved (at most as many
again per side), so "what happened around here" reads as the session did: prompt, work,
summary. When the anchor is a record and no ``project`` is given, the anchor's project is used.

Every query walks an index on ``created_at_epoch`` (or ``project, created_at_epoch``) from the
anchor outwards with a LIMIT, so the cost does not grow with the size of the history.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from workbench.bounds import SQLITE_INT_MAX
from workbench.clock import iso_from_ms, ms_from_iso
from workbench.errors import InvalidInput, NotFound
from workbench.recall import hits
from workbench.recall.filters import Kind, SearchFilters
from workbench.recall.hits import TimelineItem

if TYPE_CHECKING:
    from workbench.recall.search import SearchEngine

MAX_DEPTH = 50
_SUMMARY_ID = re.compile(r"^[Ss](\d+)$")
_OBSERVATION_ID = re.compile(r"^#?(\d+)$")
_KIND_ORDER = {"prompt": 0, "observation": 1, "summary": 2}


class TimelineAnchor(BaseModel):
    kind: str  # observation | summary | time
    id: int | None = None
    created_at: str
    created_at_epoch: int
    project: str | None = None
    title: str | None = None
    query: str | None = None


class Timeline(BaseModel):
    anchor: TimelineAnchor
    items: list[TimelineItem]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump()


def _depth(value: Any, param: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if isinstance(value, bool) or not 0 <= number <= MAX_DEPTH:
        raise InvalidInput(f"{param} must be an integer from 0 to {MAX_DEPTH}, e.g. {param}=5")
    return number


def _resolve_anchor(
    engine: SearchEngine, anchor: int | str | None, query: str | None, project: str | None
) -> TimelineAnchor:
    conn = engine.conn
    query = (query or "").strip() or None
    if isinstance(anchor, str):
        anchor = anchor.strip() or None
    if anchor is not None and query is not None:
        raise InvalidInput(
            "give either anchor or query, not both: anchor=123 (an observation), anchor=S12 "
            "(a summary), anchor=2026-12-01T14:30:00Z, or query=words to anchor on the best hit"
        )
    if anchor is None and query is None:
        raise InvalidInput(
            "give an anchor or a query: anchor=123 (an observation id), anchor=S12 (a summary "
            "id), anchor=2026-12-01T14:30:00Z, or query=words to anchor on the best match"
        )
    if query is not None:
        # The best hybrid hit, ranked as a search ranks it, without a page's total count (or
        # remembered from the search of this query a moment ago: ``recall.anchor_memo``).
        hit = engine.anchor_of(query, SearchFilters(project=project))
        if hit is None:
            where = f" in project {project!r}" if project else ""
            raise NotFound(
                f"no observation matches the query {query!r}{where}; try other words, or pass "
                "anchor=<id or ISO timestamp>"
            )
        return TimelineAnchor(
            kind="observation",
            id=hit["id"],
            created_at=hit["created_at"],
            created_at_epoch=hit["created_at_epoch"],
            project=hit["project"],
            title=hit["title"],
            query=query,
        )
    if isinstance(anchor, bool):
        raise InvalidInput(f"anchor {anchor!r} is not an id or a timestamp")
    text = str(anchor)
    if (match := _OBSERVATION_ID.match(text)) or isinstance(anchor, int):
        number = int(match.group(1)) if match else int(text)  # text is str(anchor)
        return _record_anchor(conn, "observations", _id_in_range(number, text))
    if match := _SUMMARY_ID.match(text):
        return _record_anchor(conn, "sessions", _id_in_range(int(match.group(1)), text))
    try:
        ms = ms_from_iso(text)
    except ValueError:
        raise InvalidInput(
            f"anchor {text!r} is not an observation id (123), a summary id (S12) or an ISO "
            "timestamp within the years 1–9999 (2026-12-01 or 2026-12-01T14:30:00Z)"
        ) from None
    return TimelineAnchor(kind="time", created_at=iso_from_ms(ms), created_at_epoch=ms)


def _id_in_range(number: int, text: str) -> int:
    """An anchor id SQLite can hold (a larger one would overflow the lookup, not miss)."""
    if not 1 <= number <= SQLITE_INT_MAX:
        raise InvalidInput(
            f"anchor {text[:40]!r} is not an id: ids run from 1 to {SQLITE_INT_MAX}; find them "
            "with GET /api/search (or `workbench search`)"
        )
    return number


def _record_anchor(conn: Any, kind: Kind, number: int) -> TimelineAnchor:
    found = hits.load(conn, kind, [number]).get(number)
    if found is None:
        label = "observation" if kind == "observations" else "summary"
        shown = number if kind == "observations" else f"S{number}"
        raise NotFound(
            f"no {label} with id {shown}; find ids with GET /api/search (or `workbench search`)"
        )
    return TimelineAnchor(
        kind=hits.KIND_OF[kind],
        id=number,
        created_at=found["created_at"],
        created_at_epoch=found["created_at_epoch"],
        project=found["project"],
        title=found["title"],
    )


def _side(
    conn: Any,
    kind: Kind,
    key: tuple[int, int],
    project: str | None,
    *,
    before: bool,
    limit: int,
    bound: int | None,
) -> list[tuple[int, int]]:
    """``(id, epoch)`` of ``kind`` strictly before (or at/after) ``key`` = (epoch, id), nearest
    first."""
    if limit <= 0:
        return []
    table = hits.table_of(kind)
    op, direction = ("<", "DESC") if before else (">=", "ASC")
    clauses, params = in_project(project).table_sql(table, table)
    clauses.insert(0, f"(created_at_epoch, id) {op} (?, ?)")
    params[:0] = [key[0], key[1]]
    if bound is not None:
        clauses.append("created_at_epoch >= ?" if before else "created_at_epoch <= ?")
        params.append(bound)
    sql = (
        f"SELECT id, created_at_epoch FROM {table} WHERE {' AND '.join(clauses)}"
        f" ORDER BY created_at_epoch {direction}, id {direction} LIMIT ?"
    )
    return [(int(r[0]), int(r[1])) for r in conn.execute(sql, [*params, limit])]


def in_project(project: str | None) -> SearchFilters:
    """The filter value for "in ``project``" (None: any), compiled by the one SQLite compiler.

    Built without validation: ``project`` is a name as the store holds it (an anchor's) or
    one the caller already trimmed, and must be matched exactly as given.
    """
    return SearchFilters.model_construct(project=project)


def build(
    engine: SearchEngine,
    anchor: int | str | None,
    query: str | None,
    depth_before: Any = 5,
    depth_after: Any = 5,
    project: str | None = None,
) -> Timeline:
    before_n = _depth(depth_before, "depth_before")
    after_n = _depth(depth_after, "depth_after")
    project = (project or "").strip() or None
    conn = engine.conn
    where = _resolve_anchor(engine, anchor, query, project)
    if where.kind == "time":
        where = where.model_copy(update={"project": project})
    scope = project or where.project
    t = where.created_at_epoch
    # The anchor observation sits at (t, id); anything else anchors at (t, 0), so records at
    # exactly that millisecond count as "after".
    own_key = (t, where.id) if where.kind == "observation" and where.id is not None else (t, 0)
    obs_before = _side(
        conn, "observations", own_key, scope, before=True, limit=before_n, bound=None
    )
    after_key = (own_key[0], own_key[1] + 1) if where.kind == "observation" else own_key
    obs_after = _side(
        conn, "observations", after_key, scope, before=False, limit=after_n, bound=None
    )
    # The window: as far as the observations reach, or open-ended when a side ran out.
    start = t if before_n == 0 else None if len(obs_before) < before_n else obs_before[-1][1]
    end = t if after_n == 0 else None if len(obs_after) < after_n else obs_after[-1][1]

    wanted: dict[Kind, list[int]] = {"observations": [i for i, _ in [*obs_before, *obs_after]]}
    if where.kind == "observation" and where.id is not None:
        wanted["observations"].append(where.id)
    for kind in ("sessions", "prompts"):
        ids = [
            i for i, _ in _side(conn, kind, (t, 0), scope, before=True, limit=before_n, bound=start)
        ]
        ids += [
            i for i, _ in _side(conn, kind, (t, 0), scope, before=False, limit=after_n, bound=end)
        ]
        if where.kind == "summary" and kind == "sessions" and where.id is not None:
            ids.append(where.id)
        wanted[kind] = ids

    items: list[TimelineItem] = []
    for kind, ids in wanted.items():
        rows = hits.load(conn, kind, ids).values()
        items.extend(hits.construct(TimelineItem, {**row, "is_anchor": False}) for row in rows)
    items.sort(key=lambda i: (i.created_at_epoch, _KIND_ORDER[i.kind], i.id))
    _mark_anchor(items, where)
    return Timeline(anchor=where, items=items)


def _mark_anchor(items: list[TimelineItem], where: TimelineAnchor) -> None:
    if not items:
        return
    if where.kind in ("observation", "summary"):
        for item in items:
            if item.kind == where.kind and item.id == where.id:
                item.is_anchor = True
        return
    # A timestamp anchors on the record nearest to it in time.
    nearest = min(items, key=lambda i: abs(i.created_at_epoch - where.created_at_epoch))
    nearest.is_anchor = True
