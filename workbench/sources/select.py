"""``select``: the observations one filter value picks, from the local store, the team, or both.

A corpus is built from a selection (``knowledge/corpus.py``): under ``SelectAsk.limit``, a
filter-only selection keeps the **newest** matches (so a rebuild always picks up new work) and
a query selection keeps the most relevant; either way the rows come back **oldest first**, the
order in which the history happened.

- ``LocalRows`` selects from this store: the filter compiled once by ``SearchFilters`` (the
  same SQL as search), the query ranked by the hybrid ``SearchEngine`` (or the ``SearchFn`` a
  caller with a vector ranker hands in).
- ``TeamSource.select`` (``team/source.py``) selects from the lake under the same filter value.
- ``merge_select`` reads both as one: the newest ``limit`` of the two, oldest first; the team
  side has already left this store's own rows out (local wins).

Rows, not models: a corpus keeps only ``CORPUS_COLUMNS`` (plus ``author`` for a colleague's),
and validating each row twice (store model, then corpus model) was a third of a 2,000-row
build. The caller validates them once into its own model (``CorpusObservation``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from workbench.recall.filters import SearchFilters
from workbench.store import observations

SEARCH_PAGE = 100  # the search engine's largest page
CORPUS_COLUMNS = (
    "id",
    "type",
    "title",
    "subtitle",
    "narrative",
    "facts",
    "concepts",
    "files_read",
    "files_modified",
    "project",
    "created_at",
    "created_at_epoch",
)
_COLUMNS = ", ".join(CORPUS_COLUMNS)
_HOST_PARAMETERS = 500  # ids per ``IN (…)``: SQLite caps host parameters

# (query, filters, limit) -> observation ids, most relevant first
SearchFn = Callable[[str, SearchFilters, int], list[int]]
Selected = list[dict[str, Any]]


@dataclass(frozen=True)
class SelectAsk:
    """One selection: a validated filter value, optional words to rank by, and how many."""

    filters: SearchFilters
    query: str | None
    limit: int


class Selector(Protocol):
    """Anything that selects observations (this store, the team lake, or both)."""

    def select(self, ask: SelectAsk) -> Selected:
        """At most ``ask.limit`` rows of ``CORPUS_COLUMNS``, oldest first."""
        ...


class LocalRows:
    """This store's observations under a filter value (``search`` ranks a query's)."""

    def __init__(self, conn: sqlite3.Connection, search: SearchFn | None = None) -> None:
        self.conn = conn
        self.search = search

    def select(self, ask: SelectAsk) -> Selected:
        conn = self.conn
        if ask.query:
            search = self.search or default_search(conn)
            ids = list(dict.fromkeys(search(ask.query, ask.filters, ask.limit)))[: ask.limit]
            rows: Selected = []
            for start in range(0, len(ids), _HOST_PARAMETERS):
                chunk = ids[start : start + _HOST_PARAMETERS]
                sql = (
                    f"SELECT {_COLUMNS} FROM observations "
                    f"WHERE id IN ({','.join('?' * len(chunk))})"
                )
                rows.extend(_rows(conn.execute(sql, chunk)))
            return sorted(rows, key=lambda r: (r["created_at_epoch"], r["id"]))
        clauses, params = ask.filters.observation_sql("o")
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = (
            f"SELECT {_COLUMNS} FROM (SELECT o.* FROM observations o"
            f"{where} ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT ?)"
            " ORDER BY created_at_epoch ASC, id ASC"
        )
        return _rows(conn.execute(sql, [*params, ask.limit]))


class MergedRows:
    """``local`` and ``team`` selected as one (``merge_select``)."""

    def __init__(self, local: Selector, team: Selector) -> None:
        self.local = local
        self.team = team

    def select(self, ask: SelectAsk) -> Selected:
        return merge_select(self.local.select(ask), self.team.select(ask), ask.limit)


def merge_select(local: Selected, team: Selected, limit: int) -> Selected:
    """The newest ``limit`` of both, oldest first (a tie: local before colleagues, by author
    then id)."""
    both = sorted(
        local + team, key=lambda r: (r["created_at_epoch"], r.get("author") or "", r["id"])
    )
    return both[-limit:]


def _rows(cursor: sqlite3.Cursor) -> Selected:
    out = []
    for row in cursor:
        data = dict(zip(CORPUS_COLUMNS, row, strict=True))
        for name in observations.JSON_FIELDS:
            data[name] = json.loads(data[name])
        out.append(data)
    return out


def default_search(conn: sqlite3.Connection, settings: Any = None, ranker: Any = None) -> SearchFn:
    """Hybrid search over ``conn`` (full text only when no vector ranker is given)."""
    from workbench.recall.search import SearchEngine

    engine = SearchEngine(conn, settings, ranker)

    def run(query: str, filters: SearchFilters, limit: int) -> list[int]:
        ids: list[int] = []
        # The engine pages at most SEARCH_PAGE hits at a time; a selection may want more.
        for offset in range(0, limit, SEARCH_PAGE):
            result = engine.search(
                query,
                filters,
                types="observations",
                mode="hybrid",
                limit=min(SEARCH_PAGE, limit - offset),
                offset=offset,
            )
            ids.extend(hit.id for hit in result.observations)
            if len(result.observations) < SEARCH_PAGE:
                break
        return list(dict.fromkeys(ids))

    return run
