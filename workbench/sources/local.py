"""The local store as a ``MemorySource``: SQLite (FTS5) + FAISS through ``SearchEngine``.

Each reply is the engine's result as the typed reply the route sends, with ``stale`` marks
set on the returned page only (``recall.stale_marks``). The service builds it over its store
and vector ranker; the CLI builds it over the store opened read-only when the service is down
(full text only).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from workbench.recall import hits
from workbench.recall.search import SearchEngine, SearchResult
from workbench.recall.stale_marks import mark_refs, marks
from workbench.sources.observations import Fetched, ObservationView
from workbench.sources.replies import LocalTimeline, SearchReply

if TYPE_CHECKING:
    from workbench.models import Observation
    from workbench.recall.search_query import SearchQuery
    from workbench.sources.source import GetAsk, TimelineAsk


class LocalSource:
    """Search, timeline and get over one store (``engine``'s)."""

    def __init__(self, engine: SearchEngine) -> None:
        self.engine = engine

    def search(self, ask: SearchQuery, *, count_totals: bool = True) -> SearchReply:
        found = self.engine.run(ask, count_totals=count_totals)  # validated at the edge
        mark_refs(self.engine.conn, found.observations)  # the returned page only
        return reply_of(found)

    def timeline(self, ask: TimelineAsk) -> LocalTimeline:
        around = self.engine.timeline(
            anchor=ask.anchor,
            query=ask.query,
            depth_before=ask.depth_before,
            depth_after=ask.depth_after,
            project=ask.project,
        )
        mark_refs(self.engine.conn, around.items)
        return hits.construct(LocalTimeline, {"anchor": around.anchor, "items": around.items})

    def get(self, ask: GetAsk) -> Fetched:
        """This store's observations by id, each with its staleness; a team ref is not ours
        (a merger asks the team for it), so it is listed as not found."""
        from workbench.store import observations

        conn = self.engine.conn
        found = observations.get_many(
            conn, list(ask.ids), order_by=ask.order_by, limit=ask.limit, project=ask.project
        )
        mine = with_staleness(conn, found)
        absent = sorted(set(ask.ids) - {o.id for o in found})
        return Fetched(mine=mine, missing_ids=absent, missing_refs=list(ask.refs))


def with_staleness(conn: sqlite3.Connection, found: list[Observation]) -> list[ObservationView]:
    """Each observation with its ``stale`` flag and changed files (``workbench.staleness``)."""
    verdicts = marks(conn, [o.id for o in found])
    views = []
    for obs in found:
        stale, files = verdicts.get(obs.id, (None, None))
        views.append(ObservationView(**obs.model_dump(), stale=stale, stale_files=files))
    return views


def reply_of(found: SearchResult) -> SearchReply:
    """The engine's result as the reply (the same hit objects: nothing is copied)."""
    return (
        hits.construct(
            SearchReply,
            {
                "observations": found.observations,
                "sessions": found.sessions,
                "prompts": found.prompts,
                "total_results": found.total
                if found.total_results is None
                else found.total_results,
                "total_is_lower_bound": found.total_is_lower_bound,
                "query": found.query,
                "mode": found.mode,
                "degraded": found.degraded,
                "vectors_behind": found.vectors_behind,
                "vectors_static": found.vectors_static,
            },
        )
        .ordered_by(found.order_by)
        .rebuilding(found.vectors_rebuilding)
    )
