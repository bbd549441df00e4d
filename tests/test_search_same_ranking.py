"""Issue 21's cheaper search paths rank exactly as before, on a real store.

- Hybrid's vector side now runs on the vector pool beside the full-text side: every query of
  the relevance set, with and without a filter, gets the hits (ids, order, scores) of the
  sequence the engine ran before (full text, vector list, coverage, the cosines of the
  full-text hits beyond the vector list, fusion, the neighbouring turns, the second stage),
  spelled out here step by step with the fusion helper's own functions.
- The timeline by query anchors on ``SearchEngine.top_observation`` instead of a whole search
  page (no total count): the anchor is the search's first hit, for every query.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest

from tests.relevance_set import QUERIES, Seeded, seed
from tests.test_search import KeywordRanker
from workbench.recall import fts, fusion, rerank
from workbench.recall.filters import SearchFilters
from workbench.recall.search import FUSION_DEPTH, SearchEngine
from workbench.store.database import Store

FILTERS = [SearchFilters(), SearchFilters(project="payments-api"), SearchFilters(project="infra")]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Seeded]]:
    store = Store(tmp_path_factory.mktemp("same-ranking") / "workbench.db")
    labels = seed(store)
    yield store, labels
    store.close()


def allowed_ids(store: Store, filters: SearchFilters) -> list[int] | None:
    if filters.is_empty():
        return None
    clauses, params = filters.observation_sql("o")
    sql = f"SELECT o.id FROM observations o WHERE {' AND '.join(clauses)}"
    return [int(r[0]) for r in store.conn.execute(sql, params)]


def sequential_hybrid(
    store: Store, ranker: KeywordRanker, query: str, filters: SearchFilters, depth: int
) -> list[tuple[int, float]]:
    """The hybrid ranking as the engine computed it before issue 21, one step after another."""
    conn = store.conn
    k = min(max(FUSION_DEPTH, 2 * depth), 500)
    allowed = allowed_ids(store, filters)
    vector: Sequence[tuple[int, float]] = [] if allowed == [] else ranker.rank(query, k, allowed)
    if allowed is not None:
        vector = [(i, s) for i, s in vector if i in set(allowed)]
    text = fts.rank(conn, "observations", query, filters, limit=k)
    cover = fusion.coverage(conn, "observations", query, [i for i, _ in text])
    seen = {i for i, _ in vector}
    beyond = [i for i, _ in text if i not in seen]
    cosines = {i: c for i, c in ranker.rank(query, len(beyond), beyond) if i in set(beyond)}
    unembedded = set(beyond) - cosines.keys()
    params = fusion.FusionParams.from_settings(None)
    fused = fusion.fuse(text, list(vector), cover, params, cosines=cosines, unembedded=unembedded)
    if params.neighbour_weight > 0:  # the session's neighbouring turns share a hit's score
        beside = fusion.neighbours(conn, [i for i, _ in fused])
        open_ = filters.is_empty() or filters.only_projects()
        fused = fusion.smooth(
            fused, beside, params.neighbour_weight, None if open_ else {i for i, _ in fused}
        )
    candidates = rerank.Candidates(fused, text, list(vector), cosines)
    fused, _ = rerank.rerank_or_fused(conn, query, candidates, None)
    return [(i, float(f"{s:.6g}")) for i, s in fused[:depth]]


@pytest.mark.parametrize("filters", FILTERS, ids=["all", "payments", "infra"])
def test_hybrid_ranks_as_the_sequential_steps_did(
    seeded: tuple[Store, Seeded], filters: SearchFilters
) -> None:
    store, _ = seeded
    ranker = KeywordRanker(store)
    engine = SearchEngine(store, None, ranker=ranker)
    for query in QUERIES:
        for depth in (1, 5, 20):
            got = engine.search(query, filters, types=["observations"], limit=depth)
            hits = [(h.id, h.score) for h in got.observations]
            assert hits == sequential_hybrid(store, ranker, query, filters, depth), query


def test_hybrid_runs_its_vector_side_beside_the_full_text(seeded: tuple[Store, Seeded]) -> None:
    store, _ = seeded
    threads: list[str] = []

    class Watched(KeywordRanker):
        def rank(
            self, query: str, k: int, allowed_ids: Sequence[int] | None
        ) -> list[tuple[int, float]]:
            threads.append(threading.current_thread().name)
            return super().rank(query, k, allowed_ids)

    SearchEngine(store, None, ranker=Watched(store)).search("refund charged twice")
    assert threads
    assert threads[0].startswith("workbench-vector")  # the vector list, off the request thread
    assert threads[0] != threading.current_thread().name


@pytest.mark.parametrize("filters", FILTERS, ids=["all", "payments", "infra"])
def test_timeline_anchor_is_the_searchs_first_hit(
    seeded: tuple[Store, Seeded], filters: SearchFilters
) -> None:
    store, _ = seeded
    engine = SearchEngine(store, None, ranker=KeywordRanker(store))
    for query in [*QUERIES, "zzzz-nothing-matches-this"]:
        page = engine.search(query, filters, types=["observations"], limit=1).observations
        top = engine.top_observation(query, filters)
        assert (top.id if top else None) == (page[0].id if page else None), query
        if page:
            line = engine.timeline(query=query, project=filters.project)
            assert line.anchor.id == page[0].id
            assert [i.id for i in line.items if i.is_anchor] == [page[0].id]


def test_timeline_anchor_without_a_ranker_is_the_full_text_top(
    seeded: tuple[Store, Seeded],
) -> None:
    store, _ = seeded
    engine = SearchEngine(store, None)
    for query in QUERIES:
        page = engine.search(query, types=["observations"], limit=1).observations
        assert engine.timeline(query=query).anchor.id == page[0].id
