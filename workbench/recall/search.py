"""Hybrid search: BM25 and a vector ranker fused by weighted scores, over one set of filters.

Layer 1 of the 3-layer workflow (search → timeline → fetch): a search returns a compact index
of hits (id, type, title, time, score, token estimate, the rankers that found it), never full
records.

- ``mode="hybrid"`` (default): weighted, score-aware fusion of the BM25 list and the vector
  list with a BM25 confidence gate (``workbench/recall/fusion.py``; ``search_fusion="rrf"``
  keeps reciprocal rank to compare). Without a usable vector ranker it degrades to full text
  and says why in ``degraded``; it never fails for that reason. ``"fts"`` and ``"vector"``
  run one ranker, so a user can compare them; ``"vector"`` without a ranker is an error that
  says why.
- Both rankers honour the same ``SearchFilters``: BM25 through SQL, the vector ranker through
  the set of allowed observation ids (``None`` when unfiltered).
- Only observations have vectors: session summaries and prompts are always ranked by BM25.
- ``order_by="date_desc"|"date_asc"`` sorts the matched set: the best ``DATE_POOL`` matches by
  relevance (more when paging deeper), so recent-but-barely-related rows do not crowd out
  the answer. With no query, filters alone give a listing by date.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from workbench.errors import InvalidInput
from workbench.recall import (
    anchor_memo,
    feedback,
    fts,
    fusion,
    hits,
    query_dates,
    rerank,
    session_spread,
    session_term,
    totals,
    turn_gate,
)
from workbench.recall.filters import Kind, SearchFilters, coerce_list
from workbench.recall.fusion import RRF_K, rrf  # noqa: F401  (re-exported: tests, bench)
from workbench.recall.hits import SearchHit

if TYPE_CHECKING:
    from workbench.recall.anchor_memo import AnchorMemo
    from workbench.recall.search_query import SearchQuery

log = logging.getLogger("workbench.recall")

Mode = Literal["hybrid", "fts", "vector"]
OrderBy = Literal["relevance", "date_desc", "date_asc"]
KINDS: tuple[Kind, ...] = ("observations", "sessions", "prompts")
MODES: tuple[str, ...] = ("hybrid", "fts", "vector")
ORDERS: tuple[str, ...] = ("relevance", "date_desc", "date_asc")
MAX_LIMIT = 100
# Deeper pages of a ranked search are noise, and the ranking depth grows with offset + limit:
# a bound keeps one request from asking the rankers for millions of candidates.
MAX_OFFSET = 10_000
FUSION_DEPTH = 50  # each ranker contributes at least this many candidates to the fusion
DATE_POOL = 200


def fusion_depth(depth: int) -> int:
    """How many candidates each ranker gives the fusion of a ranking ``depth`` deep: at
    least ``FUSION_DEPTH``, twice the depth past it, at most 500. One rule for the ranking
    and for ``SearchEngine._anchor_slot``, which reuses a page's first hit as the timeline's
    anchor only when the page fused lists as deep as the anchor's own (depth 1)."""
    return min(max(FUSION_DEPTH, 2 * depth), 500)


_KIND_ALIASES = {
    "observation": "observations",
    "observations": "observations",
    "obs": "observations",
    "session": "sessions",
    "sessions": "sessions",
    "summary": "sessions",
    "summaries": "sessions",
    "prompt": "prompts",
    "prompts": "prompts",
}


@runtime_checkable
class VectorRanker(Protocol):
    @property
    def name(self) -> str: ...  # e.g. "minilm"

    def available(self) -> bool: ...

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]: ...  # (observation id, cosine), best first

    # With ``allowed_ids``, every allowed id the index holds (up to k) comes back: hybrid asks
    # for the full-text hits' similarities this way, and reads an absent id as "not embedded
    # yet".


class SearchResult(BaseModel):
    """One search's hits, grouped by kind; ``to_json`` is the ``format=json`` contract.

    ``total_results`` (``totalResults``) counts every record the search matches, not the hits
    on this page; ``total_is_lower_bound`` (``totalIsLowerBound``) says counting stopped at its
    cap or a vector ranker contributed (``recall.totals``).
    """

    query: str | None
    mode: str  # what ran: hybrid | fts | vector | listing (no query)
    degraded: str | None = None  # why hybrid fell back to full text
    order_by: str = "relevance"
    observations: list[SearchHit] = Field(default_factory=list)
    sessions: list[SearchHit] = Field(default_factory=list)
    prompts: list[SearchHit] = Field(default_factory=list)
    total_results: int | None = None  # None: not counted, the page's hits stand in
    total_is_lower_bound: bool = False
    # Observations not in the vector index yet (None: no vector ranker took part). While it
    # is above 0 the vector side answers from the vectors that exist; full text covers all.
    vectors_behind: int | None = None
    # Of those, how many the static tier holds (matched by the static model meanwhile).
    vectors_static: int | None = None
    # ``(done, total)`` while the index is filled from the embeddings cache at start (why
    # they are behind); for the text reply's note only, not in the JSON contract.
    vectors_rebuilding: tuple[int, int] | None = None

    @property
    def total(self) -> int:
        """Hits on this page (``total_results`` counts every match)."""
        return len(self.observations) + len(self.sessions) + len(self.prompts)

    def add_total(self, matches: tuple[int, bool]) -> None:
        """Add one kind's ``(count, is_lower_bound)`` from ``totals.count``."""
        self.total_results = (self.total_results or 0) + matches[0]
        self.total_is_lower_bound = self.total_is_lower_bound or matches[1]

    def hits(self) -> list[SearchHit]:
        return [*self.observations, *self.sessions, *self.prompts]

    def to_json(self) -> dict[str, Any]:
        """The ``/api/search?format=json`` contract, exactly."""
        return {
            "observations": [h.model_dump() for h in self.observations],
            "sessions": [h.model_dump() for h in self.sessions],
            "prompts": [h.model_dump() for h in self.prompts],
            "totalResults": self.total if self.total_results is None else self.total_results,
            "totalIsLowerBound": self.total_is_lower_bound,
            "query": self.query,
            "mode": self.mode,
            "degraded": self.degraded,
            "vectorsBehind": self.vectors_behind,
            "vectorsStatic": self.vectors_static,
        }


def parse_types(value: Any) -> tuple[Kind, ...]:
    """``type`` as csv / list / repeated keys → kinds in canonical order (all when empty)."""
    wanted = coerce_list(value, "type")
    if not wanted:
        return KINDS
    unknown = [t for t in wanted if t.lower() not in _KIND_ALIASES]
    if unknown:
        raise InvalidInput(
            f"type {', '.join(repr(t) for t in unknown)} is not a search type; use "
            "observations, sessions or prompts (csv for several, e.g. type=observations,prompts)"
        )
    chosen = {_KIND_ALIASES[t.lower()] for t in wanted}
    return tuple(k for k in KINDS if k in chosen)


class SearchEngine:
    """Search and timeline over one store. Cheap to build: make one per request.

    ``store_or_conn`` is a ``Store`` (its thread's connection is used at call time) or a
    ``sqlite3.Connection``. ``ranker`` is the optional vector ranker (``VectorRanker``).
    ``anchors``: the service's memo of recent rankings' first observation
    (``recall.anchor_memo``), which searches fill and the timeline by query reads.
    """

    def __init__(
        self,
        store_or_conn: Any,
        settings: Any = None,
        ranker: VectorRanker | None = None,
        *,
        anchors: AnchorMemo | None = None,
    ) -> None:
        self._source = store_or_conn
        self.settings = settings
        self.ranker = ranker
        self.anchors = anchors
        self.reranked: dict[int, str] = {}  # observation id -> the reranker that placed it
        # The last ranking gave up a part and went on without it (a vector ranker or a
        # second stage raised): its order is not remembered (``anchor_memo``).
        self.failed_open = False

    @property
    def conn(self) -> sqlite3.Connection:
        if isinstance(self._source, sqlite3.Connection):
            return self._source
        conn: sqlite3.Connection = self._source.conn
        return conn

    # -- the vector ranker's state ----------------------------------------------------------
    def vector_unavailable(self) -> str | None:
        """None when semantic search can run, else the reason it cannot."""
        if self.ranker is None:
            return "no embedding model is loaded in this process"
        name = getattr(self.ranker, "name", "vector")
        try:
            ok = self.ranker.available()
        except Exception as exc:  # a ranker must never take search down with it
            log.warning("vector ranker %s failed its availability check: %s", name, exc)
            return f"the {name} ranker failed its availability check ({exc})"
        if ok:
            return None
        reason = getattr(self.ranker, "unavailable_reason", None)
        return str(reason) if reason else f"the {name} model or its index is not available"

    # -- search -----------------------------------------------------------------------------
    @fts.one_search()  # each document frequency is counted once per search (fts.py)
    def search(
        self,
        query: str | None = None,
        filters: SearchFilters | None = None,
        *,
        types: Sequence[str] | str | None = None,
        mode: str = "hybrid",
        order_by: str = "relevance",
        limit: int = 20,
        offset: int = 0,
        count_totals: bool = True,
    ) -> SearchResult:
        """Search (or, with filters and no query, list by date) the chosen kinds.

        ``count_totals=False``: the answer will not show ``totalResults`` (the text index
        does not), so nothing is counted and ``total_results`` stays None; the hits are the
        same. Counting was up to a tenth of a search's time at 100k (``bench/search.py``).

        The arguments are a library caller's raw values and are checked here; a search
        validated at the edge (``SearchQuery``) goes through ``run`` and is not checked again.
        """
        kinds = parse_types(types)
        mode = _choice(mode or "hybrid", "mode", MODES, "mode=fts")
        order_by = _choice(order_by or "relevance", "order_by", ORDERS, "order_by=date_desc")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, e.g. limit=20")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(
                f"offset must be an integer from 0 to {MAX_OFFSET}, e.g. offset=20; "
                "narrow the search (a filter, other words) to reach older hits"
            )
        return self._search(
            query, filters or SearchFilters(), kinds, mode, order_by, limit, offset, count_totals
        )

    @fts.one_search()  # as ``search``: the route's searches count each frequency once too
    def run(self, ask: SearchQuery, *, count_totals: bool = True) -> SearchResult:
        """``ask``, validated once at the edge: its kinds, mode, order, limit and offset are
        used as they are (``search`` checks a library caller's raw values)."""
        kinds = tuple(k for k in KINDS if k in ask.kinds) or KINDS
        return self._search(
            ask.query,
            ask.filters(),
            kinds,
            ask.mode,
            ask.order_by,
            ask.limit,
            ask.offset,
            count_totals,
        )

    def _search(
        self,
        query: str | None,
        filters: SearchFilters,
        kinds: tuple[Kind, ...],
        mode: str,
        order_by: str,
        limit: int,
        offset: int,
        count_totals: bool,
    ) -> SearchResult:
        query = (query or "").strip() or None
        self.reranked = {}  # this search's second stage only (an engine may be reused)
        self.failed_open = False
        if query is None and filters.is_empty():
            raise InvalidInput(
                "give a query or at least one filter, e.g. query=refund charged twice, or "
                "project=payments-api, types=bugfix, concepts=…, files=src/…, "
                "since=2026-12-01"
            )
        if query is None:
            # Trigger: filters but no words. Why: "what happened in project X last week" is a
            # listing, and ranking needs words. Outcome: newest (or oldest) first, by SQL.
            order = "date_asc" if order_by == "date_asc" else "date_desc"
            result = SearchResult(query=None, mode="listing", order_by=order)
            for kind in kinds:
                page = self._listing(kind, filters, order, limit, offset)
                setattr(result, kind, self._hydrate(kind, page, {}))
                found = offset + len(page)
                if count_totals:
                    result.add_total(totals.count(self.conn, kind, None, filters, at_least=found))
            return result

        # Read before the ranking: a write meanwhile leaves what it ranks under the older one.
        remember = (
            self._anchor_slot(query, filters, mode, order_by, offset + limit, offset)
            if "observations" in kinds
            else None
        )
        used, degraded = self._resolve_mode(mode)
        result = SearchResult(query=query, mode=used, degraded=degraded, order_by=order_by)
        if used != "fts" and "observations" in kinds:
            result.vectors_behind = _behind(self.ranker)
            result.vectors_static = _static(self.ranker)
            result.vectors_rebuilding = _rebuilding(self.ranker)
        need = offset + limit
        depth = max(DATE_POOL, need) if order_by != "relevance" else need
        pages: dict[str, tuple[list[SearchHit], tuple[int, bool] | None]] = {}

        def page_of(
            kind: Kind, scored: list[tuple[int, float]], ranks: dict[int, dict[str, int]]
        ) -> tuple[list[SearchHit], tuple[int, bool] | None]:
            """One kind's hits on this page and its ``totals.count`` (None: not counted)."""
            if order_by != "relevance":
                scored = self._date_order(kind, scored, descending=order_by == "date_desc")
            found = self._hydrate(kind, scored[offset:need], ranks)
            if not count_totals:
                return found, None
            semantic = [i for i, found_by in ranks.items() if set(found_by) - {"fts"}]
            textual = {i for i, found_by in ranks.items() if "fts" in found_by}
            matches = totals.count(
                self.conn,
                kind,
                query,
                filters,
                vector_ids=semantic,
                text_ids=textual,
                at_least=len(scored),
            )
            return found, matches

        def text_only(kind: Kind) -> tuple[list[SearchHit], tuple[int, bool] | None]:
            scored = fts.rank(self.conn, kind, query, filters, limit=depth)
            return page_of(kind, scored, {i: {"fts": n} for n, (i, _) in enumerate(scored, 1)})

        def the_others() -> None:
            # Trigger: hybrid, while its vector side still runs. Why: summaries and prompts
            # are full text only and need nothing from it. Outcome: they are ranked, read and
            # counted in time the thread would spend waiting; the same pages, used below.
            for kind in kinds:
                if kind != "observations":
                    pages[kind] = text_only(kind)

        for kind in kinds:
            if kind == "observations":
                scored, ranks = self._rank_observations(
                    query, filters, used, depth, result, meanwhile=the_others
                )
                if remember is not None and not self.failed_open:
                    self._remember(remember, scored)
                pages[kind] = page_of(kind, scored, ranks)
            elif kind not in pages:
                pages[kind] = text_only(kind)
        for kind in kinds:
            kind_hits, matches = pages[kind]
            setattr(result, kind, kind_hits)
            if matches is not None:
                result.add_total(matches)
        return result

    @fts.one_search()
    def top_observation(self, query: str, filters: SearchFilters) -> SearchHit | None:
        """The first hit of ``search(query, filters, types=["observations"], limit=1)``, by
        the same ranking, without what a page of results costs beyond it (the total count,
        the vector backlog): the timeline's anchor by query.

        Also without the neighbouring turns' share when it cannot change which hit is first
        (``first_is_settled``): then the hit's ``score`` is its fused score before that share.
        """
        query = query.strip()
        if not query:
            return None
        scored, ranks = self._first_ranked(query, filters)
        found = self._hydrate("observations", scored[:1], ranks)
        return found[0] if found else None

    @fts.one_search()
    def anchor_of(self, query: str, filters: SearchFilters) -> dict[str, Any] | None:
        """The timeline's anchor by query: the row (``hits.load``: id, time, project, title)
        of ``top_observation``'s hit, None when nothing matches.

        Taken from ``anchors`` when a search or a timeline ranked this query under this
        filter and nothing a ranking reads has changed since (``recall.anchor_memo``); else
        ranked, and remembered.
        """
        query = query.strip()
        if not query:
            return None
        remember = self._anchor_slot(query, filters, "hybrid", "relevance", 1, 0)
        if remember is not None and self.anchors is not None:
            known, first = self.anchors.get(*remember)
            if known:
                return None if first is None else self._row(first)
        scored, _ = self._first_ranked(query, filters)
        if remember is not None and not self.failed_open:
            self._remember(remember, scored)
        return self._row(scored[0][0]) if scored else None

    def _first_ranked(
        self, query: str, filters: SearchFilters
    ) -> tuple[list[tuple[int, float]], dict[int, dict[str, int]]]:
        """``top_observation``'s ranking: its first hit (and ranks) by the search's order."""
        self.reranked = {}
        self.failed_open = False
        used, degraded = self._resolve_mode("hybrid")
        scratch = SearchResult(query=query, mode=used, degraded=degraded)
        return self._rank_observations(query, filters, used, 1, scratch, first_only=True)

    def _row(self, observation_id: int) -> dict[str, Any] | None:
        """The observation's index fields (None: gone, as ``_hydrate`` skips it)."""
        return hits.load(self.conn, "observations", [observation_id]).get(observation_id)

    def _anchor_slot(
        self,
        query: str,
        filters: SearchFilters,
        mode: str,
        order_by: str,
        need: int,
        offset: int,
    ) -> tuple[anchor_memo.Generation, anchor_memo.Key] | None:
        """``(generation, key)`` under which this ranking's first observation is the timeline
        anchor of ``key``, or None when it is not one (or there is no memo).

        Trigger: hybrid asked, relevance order, the first page, and a page that fuses lists
        as deep as the anchor's (``FUSION_DEPTH``: a deeper page fuses longer lists). Why:
        then the first hit is ``top_observation``'s (tests/test_search_same_ranking.py).
        Claude's rerank is a call out each time that may fail open differently: never.
        """
        if self.anchors is None or mode != "hybrid" or order_by != "relevance" or offset:
            return None
        if fusion_depth(need) != fusion_depth(1):
            return None
        key = anchor_memo.key_of(query, filters)
        if key is None:
            return None
        from workbench.recall import rerank_llm

        if rerank_llm.enabled(self.settings):
            return None
        generation = anchor_memo.generation_of(self.conn, self.ranker, self.settings)
        return None if generation is None else (generation, key)

    def _remember(
        self,
        slot: tuple[anchor_memo.Generation, anchor_memo.Key],
        scored: Sequence[tuple[int, float]],
    ) -> None:
        """Store the ranking's first id under ``slot``, valid until a cached count it used
        expires (``fts.df_horizon``; inside the search's ``one_search`` block)."""
        assert self.anchors is not None
        first = scored[0][0] if scored else None
        self.anchors.put(slot[0], slot[1], first, fts.df_horizon())

    def _resolve_mode(self, mode: str) -> tuple[str, str | None]:
        if mode == "fts":
            return "fts", None
        reason = self.vector_unavailable()
        if reason is None:
            return mode, None
        if mode == "vector":
            raise InvalidInput(
                f"semantic search is unavailable: {reason}. Use mode=fts, or mode=hybrid "
                "(which falls back to full text); `workbench doctor` shows the embedding setup"
            )
        return "fts", f"semantic search unavailable ({reason}); results are full-text only"

    def _rank_observations(
        self,
        query: str,
        filters: SearchFilters,
        mode: str,
        depth: int,
        result: SearchResult,
        *,
        first_only: bool = False,
        meanwhile: Callable[[], None] | None = None,
    ) -> tuple[list[tuple[int, float]], dict[int, dict[str, int]]]:
        """``(scored, ranks)`` for observations. ``first_only``: only the first hit's id is
        wanted (the timeline's anchor), so steps that cannot change it may be skipped.
        ``meanwhile``: other work of this search, run before hybrid waits for its vector side.
        """
        if mode == "fts":
            scored = fts.rank(self.conn, "observations", query, filters, limit=depth)
            return scored, {i: {"fts": n} for n, (i, _) in enumerate(scored, start=1)}
        assert self.ranker is not None
        name = self.ranker.name
        fused_depth = fusion_depth(depth)
        params = fusion.FusionParams.from_settings(self.settings)
        talk = session_term.ConversationParams.from_settings(self.settings)
        text: list[tuple[int, float]] = []
        lexical: list[tuple[int, float]] = []  # ``text`` with each turn's context (carried)
        cover: dict[int, float] = {}
        if mode == "hybrid":
            # Trigger: hybrid. Why: the query embedding and the vector scan (ONNX Runtime and
            # FAISS, both without the GIL) cost as much as the full-text side (SQLite, also
            # without it), and neither needs the other. Outcome: the vector side runs on the
            # vector pool while this thread ranks the full text; same lists, same fusion.
            pending = self._start_vector_rank(query, filters, fused_depth, background=True)
            text = fts.rank(self.conn, "observations", query, filters, limit=fused_depth)
            text = feedback.rank(
                self.conn, query, text, filters, params.feedback_weight, fused_depth
            )
            lexical, previous = self._with_context(
                text, filters, params.context_weight, fused_depth, talk.context_gate
            )
            cover = fusion.coverage(
                self.conn, "observations", query, [i for i, _ in lexical], previous
            )
            if meanwhile is not None:
                meanwhile()
            vector = pending()
        else:
            vector = self._vector_rank(query, filters, depth)
        if vector is None:
            # Trigger: the ranker raised mid-query. Why: search must never fail because an
            # optional ranker did. Outcome: full text, and the result says so.
            self.failed_open = True
            if mode == "vector":
                raise InvalidInput(
                    f"semantic search failed ({name}); use mode=fts or mode=hybrid instead"
                )
            result.mode = "fts"
            result.degraded = f"semantic search failed ({name}); results are full-text only"
            scored = fts.rank(self.conn, "observations", query, filters, limit=depth)
            return scored, {i: {"fts": n} for n, (i, _) in enumerate(scored, start=1)}
        ranks: dict[int, dict[str, int]] = {}
        for n, (i, _) in enumerate(vector, start=1):
            ranks.setdefault(i, {})[name] = n
        if mode == "vector":
            return vector[:depth], ranks
        for n, (i, _) in enumerate(text, start=1):
            ranks.setdefault(i, {})["fts"] = n
        seen = {i for i, _ in vector}
        beyond = [i for i, _ in lexical if i not in seen]
        cosines = self._cosines_of(query, beyond)
        unembedded = set() if cosines is None else set(beyond) - cosines.keys()
        fused = fusion.fuse(lexical, vector, cover, params, cosines=cosines, unembedded=unembedded)
        days = query_dates.days_named(query) if params.date_weight > 0 else []
        spread = session_spread.SpreadParams.from_settings(self.settings)
        weight = params.neighbour_weight
        if weight > 0:
            # Steps after the neighbours' share that reorder by score: a named day's lift,
            # the session term and the session spread (each acts on every hit's score).
            reorders_later = bool(days) or talk.session_weight > 0 or spread.weight > 0
            if self._no_second_stage() and not reorders_later:
                # Trigger: nothing after the neighbours' share reorders the list, so only
                # the first ``depth`` hits matter (one: the timeline's anchor). Why: the
                # share of every hit costs a lookup of all their neighbours. Outcome: none
                # when the share cannot change the first hit, else only the neighbours of
                # the hits that could still be among the first ``depth``.
                if not (first_only and first_is_settled(fused, weight)):
                    head = 1 if first_only else depth
                    fused = self._head_with_neighbours(
                        fused, filters, weight, head, params.neighbour_lift
                    )
            elif (reach := rerank.reach(self.settings)) is not None and not reorders_later:
                # Trigger: the second stage reorders only the first ``reach`` hits (no Claude
                # stage). Why: it reads their scores and order, never the rest's. Outcome:
                # the neighbours of only the hits that could be among the first ``reach``
                # (or ``depth``) of the whole lookup, as above.
                fused = self._head_with_neighbours(
                    fused, filters, weight, max(depth, reach), params.neighbour_lift
                )
            else:
                fused = self._with_neighbours(fused, filters, weight, params.neighbour_lift)
        if days:
            on_day = fusion.created_on(self.conn, [i for i, _ in fused], days)
            fused = fusion.dated(fused, on_day, params.date_weight)
        # One lookup of the turns' sessions serves both steps below: the session term
        # rescores the hits it is given and adds none, so the spread's ids are the same.
        sessions: dict[int, tuple[str, str]] = {}
        if talk.session_weight > 0 or spread.weight > 0:
            sessions = session_term.sessions_of(self.conn, [i for i, _ in fused])
        if talk.session_weight > 0:
            # Trigger: the session term is on. Why: evidence spread over a conversation's
            # turns says which conversation holds the answer (session_term). Outcome: each
            # turn gains its share of its session's aggregate.
            fused = session_term.lifted(fused, sessions, talk.session_weight, talk.session_top)
        if spread.weight > 0:
            # Trigger: the session spread is on. Why: a multi-hop question's evidence can span
            # two sessions, and one session must not fill the page (session_spread). Outcome:
            # a session's later hits are demoted.
            fused = session_spread.spread(fused, sessions, spread.weight, spread.free)
        candidates = rerank.Candidates(fused, text, vector, cosines or {})
        fused, skipped = self._rerank(query, candidates, first_only)
        if skipped is not None and result.degraded is None:  # the stage's model is missing
            result.degraded = skipped
        return fused[:depth], ranks

    def _no_second_stage(self) -> bool:
        """Neither second stage runs (``rerank_or_fused`` then returns the list it is given)."""
        from workbench.recall import rerank_llm

        return not rerank.enabled(self.settings) and not rerank_llm.enabled(self.settings)

    def _with_context(
        self,
        text: list[tuple[int, float]],
        filters: SearchFilters,
        weight: float,
        limit: int,
        gate: turn_gate.ContextGate = "turns",
    ) -> tuple[list[tuple[int, float]], dict[int, int]]:
        """``(full-text list, id -> previous turn)`` with each turn read with the one before it
        (``fusion.carried``, ``limit`` long); with ``weight`` 0, ``text`` as it is. ``gate``
        ``"turns"``: only between two conversation turns, never tool notes (``turn_gate``).

        A turn after a hit shares its session and project, so with no filter or only a project
        filter it may join the list; under any other filter only hits already found are lifted.
        """
        if weight <= 0 or not text:
            return text, {}
        beside = fusion.neighbours(self.conn, [j for i, _ in text for j in (i, i + 1)])
        if gate == "turns":
            around = {j for i, near in beside.items() for j in (i, *near)}
            beside = turn_gate.gated(beside, turn_gate.turns_among(self.conn, sorted(around)))
        open_ = filters.is_empty() or filters.only_projects()
        allowed = None if open_ else {i for i, _ in text}
        lexical = fusion.carried(text, beside, weight, allowed)[:limit]
        return lexical, fusion.previous_turns(beside)

    def _with_neighbours(
        self,
        fused: list[tuple[int, float]],
        filters: SearchFilters,
        weight: float,
        lift: fusion.Lift,
    ) -> list[tuple[int, float]]:
        """``fusion.smooth`` over the fused hits' neighbouring turns in their sessions
        (``lift``: the search's ``FusionParams.neighbour_lift``, read once per search).

        A neighbour shares its hit's session and project, so with no filter or only a project
        filter it may join the list; under any other filter only candidates already found
        (and so allowed) are rescored.
        """
        beside = fusion.neighbours(self.conn, [i for i, _ in fused])
        open_ = filters.is_empty() or filters.only_projects()
        allowed = None if open_ else {i for i, _ in fused}
        return fusion.smooth(fused, beside, weight, allowed, lift)

    def _head_with_neighbours(
        self,
        fused: list[tuple[int, float]],
        filters: SearchFilters,
        weight: float,
        n: int,
        lift: fusion.Lift,
    ) -> list[tuple[int, float]]:
        """``_with_neighbours``' first ``n`` hits and scores (``head_of_smooth``), looking up
        only the neighbours of the hits that could be among them."""
        open_ = filters.is_empty() or filters.only_projects()
        held = {i for i, _ in fused}
        return head_of_smooth(
            fused,
            lambda ids: fusion.neighbours(self.conn, ids),
            weight,
            None if open_ else held,
            n,
            lift,
        )

    def _rerank(
        self, query: str, candidates: rerank.Candidates, first_only: bool = False
    ) -> tuple[list[tuple[int, float]], str | None]:
        """The second stage (``recall/rerank.py``): reorders the fused top-N, fails open.
        ``first_only``: only the first hit is wanted (the rest may keep the fused order).

        Returns the list and why the configured stage was skipped (its model is missing;
        None when it ran or is off): the search's ``degraded`` text."""
        fused, self.reranked, skipped = rerank.rerank_or_fused(
            self.conn, query, candidates, self.settings, first_only=first_only
        )
        if rerank.enabled(self.settings) and skipped is None and len(candidates.fused) > 1:
            # The configured stage ran on two or more candidates: it placed some, or it
            # raised and the fused order stood in (``rerank_or_fused`` fails open).
            self.failed_open = self.failed_open or not self.reranked
        return fused, skipped

    def _cosines_of(self, query: str, ids: list[int]) -> dict[int, float] | None:
        """The vector ranker's similarity for just ``ids`` (absent: not embedded yet).

        None when the ranker failed: then nothing is known about them, and they keep their
        full-text part only.
        """
        if not ids:
            return {}
        assert self.ranker is not None
        try:
            ranked = self.ranker.rank(query, len(ids), ids)
        except Exception:
            log.exception("vector ranker %s failed to score full-text hits", self.ranker.name)
            self.failed_open = True
            return None
        wanted = set(ids)
        return {int(i): float(c) for i, c in ranked if int(i) in wanted}

    def _vector_rank(
        self, query: str, filters: SearchFilters, k: int
    ) -> list[tuple[int, float]] | None:
        return self._start_vector_rank(query, filters, k)()

    def _start_vector_rank(
        self, query: str, filters: SearchFilters, k: int, *, background: bool = False
    ) -> Callable[[], list[tuple[int, float]] | None]:
        """Start the vector ranking; the returned function gives its list (None: it failed).

        The filter's ids are collected here, on this thread's connection; with ``background``
        only the ranker's call (embedding and index scan) runs on the vector pool.
        """
        ranker = self.ranker
        assert ranker is not None
        allowed: list[int] | None = None
        call: Callable[[], Sequence[tuple[int, float]]]
        in_projects = getattr(ranker, "rank_in_projects", None)
        if in_projects is not None and filters.only_projects():
            # Trigger: the only filter is the project. Why: collecting a large project's ids
            # by SQL cost more than the search; the index knows each vector's project.
            # Outcome: the ranker filters by its slot → project array.
            projects = filters.all_projects

            def call() -> Sequence[tuple[int, float]]:
                ranked: Sequence[tuple[int, float]] = in_projects(query, k, projects)
                return ranked
        else:
            if not filters.is_empty():
                clauses, params = filters.observation_sql("o")
                sql = f"SELECT o.id FROM observations o WHERE {' AND '.join(clauses)}"
                allowed = [int(r[0]) for r in self.conn.execute(sql, params)]
                if not allowed:
                    return lambda: []
            chosen = allowed

            def call() -> Sequence[tuple[int, float]]:
                return ranker.rank(query, k, chosen)

        def finish(ranked: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
            if allowed is not None:  # a ranker that ignores the allowed set must not leak rows
                permitted = set(allowed)
                ranked = [(i, s) for i, s in ranked if i in permitted]
            return [(int(i), float(s)) for i, s in ranked]

        if not background:
            try:
                ranked = call()
            except Exception:
                log.exception("vector ranker %s failed", ranker.name)
                return lambda: None
            return lambda: finish(ranked)
        future = _vector_pool().submit(call)

        def result() -> list[tuple[int, float]] | None:
            try:
                return finish(future.result())
            except Exception:
                log.exception("vector ranker %s failed", ranker.name)
                return None

        return result

    def _listing(
        self, kind: Kind, filters: SearchFilters, order: str, limit: int, offset: int
    ) -> list[tuple[int, float]]:
        if not filters.applies_to(kind):
            return []
        clauses, params = filters.record_sql(kind, "r")
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        direction = "ASC" if order == "date_asc" else "DESC"
        sql = (
            f"SELECT r.id FROM {hits.table_of(kind)} r{where}"
            f" ORDER BY r.created_at_epoch {direction}, r.id {direction} LIMIT ? OFFSET ?"
        )
        return [(int(r[0]), 0.0) for r in self.conn.execute(sql, [*params, limit, offset])]

    def _date_order(
        self, kind: Kind, scored: list[tuple[int, float]], *, descending: bool
    ) -> list[tuple[int, float]]:
        when = hits.epochs(self.conn, kind, [i for i, _ in scored])
        sign = -1 if descending else 1
        present = [pair for pair in scored if pair[0] in when]
        return sorted(present, key=lambda pair: (sign * when[pair[0]], sign * pair[0]))

    def _hydrate(
        self, kind: Kind, page: list[tuple[int, float]], ranks: dict[int, dict[str, int]]
    ) -> list[SearchHit]:
        rows = hits.load(self.conn, kind, [i for i, _ in page])
        return [
            # Unvalidated (hits.construct is model_construct): the fields come straight from
            # our own rows (validated on write).
            hits.construct(
                SearchHit,
                {
                    **rows[i],
                    "score": float(f"{score:.6g}"),
                    "ranks": ranks.get(i, {}),
                    "rankers": rankers_of(ranks.get(i, {})),
                    "rerank": self.reranked.get(i) if kind == "observations" else None,
                },
            )
            for i, score in page
            if i in rows  # a vector index may know ids deleted since it was built
        ]

    # -- timeline ---------------------------------------------------------------------------
    def timeline(
        self,
        anchor: int | str | None = None,
        query: str | None = None,
        depth_before: int = 5,
        depth_after: int = 5,
        project: str | None = None,
    ) -> Any:
        """Observations, summaries and prompts around an anchor, in time order (layer 2)."""
        from workbench.recall.timeline import build

        return build(self, anchor, query, depth_before, depth_after, project)


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
VECTOR_THREADS = 4  # concurrent searches' vector sides; more would only queue on 2 cores


def _vector_pool() -> ThreadPoolExecutor:
    """The threads hybrid search runs its vector side on (made on first use, then shared)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(VECTOR_THREADS, thread_name_prefix="workbench-vector")
        return _POOL


def first_is_settled(fused: Sequence[tuple[int, float]], weight: float) -> bool:
    """True when ``fusion.smooth(fused, any neighbours, weight)`` keeps ``fused[0]`` first.

    ``smooth`` scales the scores by the top one (the first hit's ``base`` is exactly 1.0),
    and a hit gains at most ``weight`` × a neighbour's base (≤ ``weight``), so no other hit,
    and no neighbour joining the list, can reach 1.0 when the second base plus ``weight`` is
    below it; the first hit only gains. The same float operations bound ``smooth``'s, so the
    test is exact, not approximate (tests/test_search_same_ranking.py checks it against
    ``smooth`` itself).
    """
    if not fused:
        return True
    top = max(s for _, s in fused)
    if top <= 0:
        return True  # smooth leaves such a list as it is
    if fused[0][1] != top:
        return False
    second = max((s / top for _, s in fused[1:]), default=0.0)
    return second + weight < 1.0


def head_of_smooth(
    fused: Sequence[tuple[int, float]],
    neighbours_of: Callable[[list[int]], Mapping[int, Sequence[int]]],
    weight: float,
    allowed: Collection[int] | None = None,
    n: int = 1,
    lift: fusion.Lift = fusion.DEFAULT_NEIGHBOUR_LIFT,
) -> list[tuple[int, float]]:
    """A list whose first ``n`` hits and scores are those of ``fusion.smooth(fused,
    neighbours_of(every hit), weight, allowed, lift)``, from the neighbours of only the hits
    that could be among them (under either ``lift`` a hit gains at most ``weight``).

    ``smooth`` puts each score over the top one (a hit's share), and a hit gains at most
    ``weight`` × another hit's share (≤ ``weight``). With ``b`` the ``n``-th largest share,
    the first ``n`` hits of the smoothed list all score at least ``b``, so only a hit whose
    share plus ``weight`` reaches ``b`` can be among them, and a neighbour no ranker found
    (≤ ``weight``) never is while ``weight`` is below ``b``. Those contenders get every gain
    the whole lookup would give them: a turn's neighbours are the turns beside it in its
    session (``fusion.neighbours``, a symmetric relation), so the hits that raise a
    contender are its own neighbours. The other hits keep a lower bound of their score,
    below the first ``n``'s: only ``[:n]`` is exact (tests/test_search_same_ranking.py
    checks it against ``smooth`` itself). Otherwise (fewer than ``n`` hits, or ``weight``
    not below ``b``) it is ``smooth`` over every hit's neighbours.
    """
    top = max((s for _, s in fused), default=0.0)
    shares = sorted((s / top for _, s in fused), reverse=True) if top > 0 else []
    # The slack keeps a hit at the float boundary in (the same division as smooth's).
    bar = shares[n - 1] - 1e-9 if 1 <= n <= len(shares) else 0.0
    if bar <= weight:
        return fusion.smooth(fused, neighbours_of([i for i, _ in fused]), weight, allowed, lift)
    could = [i for i, s in fused if s / top + weight >= bar]
    beside = neighbours_of(could)
    held = {i for i, _ in fused}
    raising: dict[int, tuple[int, ...]] = {}  # a hit -> the contenders beside it
    for contender in could:
        for near in beside.get(contender, ()):
            if near in held:
                raising[near] = (*raising.get(near, ()), contender)
    return fusion.smooth(fused, raising, weight, allowed, lift)


def _behind(ranker: Any) -> int | None:
    """The ranker's backlog (``vectorsBehind``), when it can tell."""
    behind = getattr(ranker, "behind", None)
    return behind() if callable(behind) else None


def _static(ranker: Any) -> int | None:
    """How many memories the ranker's static tier holds (``vectorsStatic``), when it can tell."""
    static = getattr(ranker, "static_held", None)
    return static() if callable(static) else None


def _rebuilding(ranker: Any) -> tuple[int, int] | None:
    """``(done, total)`` while the ranker's index is filled from the cache, when it can tell."""
    rebuilding = getattr(ranker, "rebuilding", None)
    return rebuilding() if callable(rebuilding) else None


def rankers_of(ranks: dict[str, int]) -> list[str]:
    """``["fts"]``, ``["vector"]`` or ``["fts", "vector"]``: who found a hit, by kind of ranker.

    ``ranks`` is keyed by ranker name (``fts``, or the model's: ``minilm``, ``static``…); the
    public field names the kind, so clients need not know which model the service runs.
    """
    found = ["fts"] if "fts" in ranks else []
    return found + (["vector"] if any(name != "fts" for name in ranks) else [])


def _choice(value: str, param: str, allowed: Sequence[str], example: str) -> str:
    if value not in allowed:
        raise InvalidInput(
            f"{param}={value!r} is not allowed; use {' | '.join(allowed)} ({example})"
        )
    return value
