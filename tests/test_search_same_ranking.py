"""Issue 21's cheaper search paths rank exactly as before, on a real store.

- Hybrid's vector side now runs on the vector pool beside the full-text side: every query of
  the relevance set, with and without a filter, gets the hits (ids, order, scores) of the
  sequence the engine ran before (full text, vector list, coverage, the cosines of the
  full-text hits beyond the vector list, fusion, the neighbouring turns, the second stage),
  spelled out here step by step with the fusion helper's own functions.
- The timeline by query anchors on ``SearchEngine.top_observation`` instead of a whole search
  page (no total count): the anchor is the search's first hit, for every query.
- A search counts each document frequency once (``fts.one_search``): every query, kind, mode
  and filter answers exactly what the engine answers without that memo.
- Hits and timeline items are read as plain tuples and built by ``hits.construct``: the same
  fields, values and set fields as the by-name rows and ``model_construct`` before them.
- Each hit's minute (``clock.minute_from_ms``) is the ``datetime`` text it was, at every
  moment a store can hold.
- The timeline's anchor skips the neighbouring turns' lookup when their share cannot change
  which hit is first (``search.first_is_settled``), and otherwise looks up only the
  neighbours of the hits that could be first, as a page does for the hits that could be on
  it (``search.head_of_smooth``): both checked against ``fusion.smooth`` itself on random
  lists and neighbours, and on the real store (the anchor tests above; a page: the hybrid
  test against the sequential steps, which smooth over every hit's neighbours). Neither
  applies when the query names a day: that day's lift acts on every hit's shared score, so
  the first hits before it may not be the first after.
- Hybrid ranks summaries and prompts (full text only) while its vector side runs: each
  kind's hits are those of a search of that kind alone, and they are ranked before the
  search waits for the vector list.
- The CamelCase test of ``store.identifiers`` (now led by a lookahead) finds what it found,
  where it found it, so the index and the query side expand text as before.
- An unfiltered count with a vector ranker's candidates looks them up in the matching rowids
  instead of a scratch index of their text: below the cap, every query's total is the one
  the scratch index gave (``fusion.matching``), with and without the hybrid's own lists.
"""

from __future__ import annotations

import random
import re
import string
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.relevance_set import QUERIES, Seeded, seed
from tests.test_search import KeywordRanker
from workbench.bounds import EPOCH_MS_MAX, EPOCH_MS_MIN
from workbench.clock import minute_from_ms
from workbench.models import ObservationDraft
from workbench.recall import fts, fusion, hits, rerank, search, totals
from workbench.recall.filters import Kind, SearchFilters
from workbench.recall.hits import SearchHit, TimelineItem
from workbench.recall.search import FUSION_DEPTH, SearchEngine, SearchResult, first_is_settled
from workbench.settings import load_settings
from workbench.store import identifiers, observations
from workbench.store.connection import atomic
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
    fused, _, _ = rerank.rerank_or_fused(conn, query, candidates, None)
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


@pytest.mark.parametrize("filters", FILTERS, ids=["all", "payments", "infra"])
@pytest.mark.parametrize("mode", ["hybrid", "fts"])
def test_a_search_answers_as_it_does_without_its_count_memo(
    seeded: tuple[Store, Seeded], filters: SearchFilters, mode: str
) -> None:
    store, _ = seeded
    engine = SearchEngine(store, None, ranker=KeywordRanker(store))
    unmemoised = SearchEngine.search.__wrapped__  # the method without fts.one_search
    for query in QUERIES:
        got = engine.search(query, filters, mode=mode, limit=20).to_json()
        want = unmemoised(engine, query, filters, mode=mode, limit=20).to_json()
        # Filtered totals too: their budget of SQLite VM steps is counted from each count's
        # first step, on a warmed snapshot (totals._within_budget), so it no longer depends
        # on what the connection ran before.
        assert got == want, query


def test_a_search_memo_lasts_one_search(tmp_path: Path) -> None:
    """A word stored after a search is counted (and found) by the next one."""
    store = Store(tmp_path / "workbench.db")
    seed(store)
    engine = SearchEngine(store, None)
    assert engine.search("quokkaword", mode="fts").total == 0
    with atomic(store.conn):
        added, _ = observations.insert(
            store.conn,
            ObservationDraft(type="feature", title="quokkaword rollout", narrative="flag on"),
            content_session_id=None,
            project="infra",
        )
    assert [h.id for h in engine.search("quokkaword", mode="fts").observations] == [added]
    store.close()


def by_name(store: Store, kind: Kind, ids: list[int]) -> dict[int, dict[str, Any]]:
    """``hits.load`` as it was before issue 21's last stop: by-name rows, field by field."""
    table, columns = hits._COLUMNS[kind]
    marks = ", ".join("?" * len(ids))
    out: dict[int, dict[str, Any]] = {}
    for row in store.conn.execute(f"SELECT {columns} FROM {table} WHERE id IN ({marks})", ids):
        common = {
            "id": row["id"],
            "kind": hits.KIND_OF[kind],
            "project": row["project"],
            "created_at": row["created_at"],
            "created_at_epoch": row["created_at_epoch"],
            "content_session_id": row["content_session_id"],
            "prompt_number": row["prompt_number"],
        }
        if kind == "observations":
            body = [row[c] for c in ("title", "subtitle", "narrative", "facts", "concepts")]
            body += [row["files_read"], row["files_modified"]]
            out[row["id"]] = {
                **common,
                "type": row["type"],
                "title": row["title"],
                "subtitle": row["subtitle"],
                "platform_source": row["platform_source"],
                "tokens": hits.estimate_tokens("\n".join(body)),
            }
        elif kind == "sessions":
            texts = [row[c] for c in ("request", "investigated", "learned", "completed")]
            texts += [row["next_steps"], row["notes"], row["files_read"], row["files_edited"]]
            out[row["id"]] = {
                **common,
                "type": "summary",
                "title": hits.first_line(row["request"])
                or hits.first_line(row["completed"])
                or "(summary)",
                "subtitle": hits.first_line(row["completed"] or row["learned"]),
                "tokens": hits.estimate_tokens("\n".join(texts)),
            }
        else:
            out[row["id"]] = {
                **common,
                "type": "prompt",
                "title": hits.first_line(row["prompt_text"]) or "(prompt)",
                "subtitle": f"prompt {row['prompt_number']}",
                "tokens": hits.estimate_tokens(row["prompt_text"]),
            }
    return out


@pytest.mark.parametrize("kind", ["observations", "sessions", "prompts"])
def test_hits_load_reads_what_the_by_name_rows_read(
    seeded: tuple[Store, Seeded], kind: Kind
) -> None:
    store, _ = seeded
    table = hits.table_of(kind)
    ids = [int(r[0]) for r in store.conn.execute(f"SELECT id FROM {table} ORDER BY id")]
    assert ids
    loaded = hits.load(store.conn, kind, [*ids, 10**9])  # an unknown id stays absent
    want = by_name(store, kind, ids)
    assert loaded == want
    assert [list(v) for v in loaded.values()] == [list(want[i]) for i in loaded]


@pytest.mark.parametrize("kind", ["observations", "sessions", "prompts"])
def test_construct_builds_what_model_construct_builds(
    seeded: tuple[Store, Seeded], kind: Kind
) -> None:
    store, _ = seeded
    table = hits.table_of(kind)
    ids = [int(r[0]) for r in store.conn.execute(f"SELECT id FROM {table} ORDER BY id")]
    for row in hits.load(store.conn, kind, ids).values():
        for model, extra in (
            (SearchHit, {"score": 1.5, "ranks": {"fts": 1}, "rankers": ["fts"], "rerank": None}),
            (SearchHit, {"score": 0.25}),  # ranks, rankers, rerank from their defaults
            (TimelineItem, {"is_anchor": False}),
            (TimelineItem, {}),
        ):
            values = {**row, **extra}
            got, want = hits.construct(model, values), model.model_construct(**values)
            assert type(got) is type(want)
            assert got == want
            assert got.model_dump() == want.model_dump()
            assert list(got.__dict__) == list(want.__dict__)
            assert got.model_fields_set == want.model_fields_set
            assert got.model_dump_json() == want.model_dump_json()


def test_minute_from_ms_is_the_datetime_text() -> None:
    def by_datetime(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")

    rng = random.Random(21)
    edges = [EPOCH_MS_MIN, EPOCH_MS_MIN + 59_999, -60_001, -60_000, -1, 0, 1, 59_999, 60_000]
    edges += [EPOCH_MS_MAX, EPOCH_MS_MAX - 60_000, 1_764_800_000_123, 32_503_680_000_000 - 1]
    samples = [rng.randint(EPOCH_MS_MIN, EPOCH_MS_MAX) for _ in range(20_000)]
    samples += [rng.randint(0, 4_102_444_800_000) for _ in range(20_000)]  # 1970–2100
    for ms in edges + samples:
        assert minute_from_ms(ms) == by_datetime(ms), ms


def test_the_camelcase_test_matches_as_the_three_forms_did() -> None:
    before = re.compile(r"[a-z][A-Z]|[0-9][A-Z][a-z]|[A-Z][A-Z][a-z]{2}")
    rng = random.Random(21)
    alphabet = string.ascii_letters + string.digits + " _-./éÉß"
    texts = ["", "IDs", "APIs", "10GB", "2FA", "XMLHttpRequest", "aB", "9Ab", "ABcd", "ABc"]
    texts += ["".join(rng.choices(alphabet, k=rng.randint(1, 12))) for _ in range(30_000)]
    texts += ["".join(rng.choices("aA1 ", k=rng.randint(1, 8))) for _ in range(5_000)]
    for text in texts:
        want = [m.span() for m in before.finditer(text)]
        assert [m.span() for m in identifiers._HUMP.finditer(text)] == want, text
        assert identifiers.split_identifiers(text) == split_before(before, text), text


def split_before(hump: re.Pattern[str], text: str) -> str:
    """``split_identifiers`` as it was (its cheap test by the three forms)."""
    if not hump.search(text):
        return text
    return identifiers._HUMPED.sub(identifiers._expand, text)


def test_first_is_settled_only_when_smooth_keeps_the_first() -> None:
    rng = random.Random(21)
    settled_seen = unsettled_seen = 0
    for _ in range(20_000):
        n = rng.randint(0, 12)
        scores = sorted((rng.choice([0.0, rng.random(), 1.0, 0.9]) for _ in range(n)), reverse=True)
        fused = [(i + 1, s * rng.choice([1.0, 3.7])) for i, s in enumerate(scores)]
        fused.sort(key=lambda pair: -pair[1])
        weight = rng.choice([0.0, 0.05, 0.1, 0.3, 0.5, 1.0])
        ids = [i for i, _ in fused] + [100, 101]  # two neighbours no ranker found
        beside = {i: tuple(rng.sample(ids, rng.randint(0, 3))) for i, _ in fused}
        allowed = rng.choice([None, set(ids)])
        if first_is_settled(fused, weight):
            settled_seen += 1
            smoothed = fusion.smooth(fused, beside, weight, allowed)
            assert [i for i, _ in smoothed[:1]] == [i for i, _ in fused[:1]], (fused, beside)
        else:
            unsettled_seen += 1
    assert settled_seen > 1000
    assert unsettled_seen > 1000


def sessions_beside(
    session: dict[int, str], looked: list[int]
) -> Callable[[list[int]], dict[int, tuple[int, ...]]]:
    """``fusion.neighbours`` over turns ``0..`` whose sessions are ``session``; each id it is
    asked about is added to ``looked``."""

    def neighbours_of(wanted: list[int]) -> dict[int, tuple[int, ...]]:
        looked.extend(wanted)
        return {i: tuple(j for j in (i - 1, i + 1) if session[j] == session[i]) for i in wanted}

    return neighbours_of


@pytest.mark.parametrize("lift", ["toward", "add"])
def test_head_of_smooth_is_smooths_head_from_the_contenders_neighbours(lift: fusion.Lift) -> None:
    """A page's (or the anchor's) share from the contenders' neighbours only: the first
    ``n`` hits and scores are ``fusion.smooth``'s over every hit's neighbours, on random
    lists, sessions, shares and ``n``, under either neighbour lift."""
    rng = random.Random(22)
    fewer = 0
    for _ in range(20_000):
        size = rng.randint(0, 12)
        ids = rng.sample(range(1, 40), size)
        fused = [(i, rng.choice([0.0, rng.random(), 1.0, 0.9]) * 3.7) for i in ids]
        fused.sort(key=lambda pair: -pair[1])
        session = {i: rng.choice("ab") for i in range(0, 42)}  # turns beside, one session
        weight = rng.choice([0.0, 0.05, 0.1, 0.3, 0.5, 0.99, 1.0])
        allowed = rng.choice([None, set(ids)])
        n = rng.choice([1, 1, 2, 3, 5, 12])
        every: list[int] = []
        beside = sessions_beside(session, every)([i for i, _ in fused])
        whole = fusion.smooth(fused, beside, weight, allowed, lift)
        some: list[int] = []
        head = search.head_of_smooth(
            fused, sessions_beside(session, some), weight, allowed, n, lift
        )
        assert head[:n] == whole[:n], (fused, weight, n)
        fewer += len(some) < len(every)
    assert fewer > 5_000  # most lists look up fewer hits' neighbours


def counting_neighbours(store: Store, looked: list[bool]) -> SearchEngine:
    """A keyword-ranked engine that appends to ``looked`` each time the anchor looks the
    neighbours up (all of them, or the contenders'), so a test sees which path a query took."""

    class Counting(SearchEngine):
        def _with_neighbours(
            self,
            fused: list[tuple[int, float]],
            filters: SearchFilters,
            weight: float,
            lift: fusion.Lift,
        ) -> list[tuple[int, float]]:
            looked.append(True)
            return super()._with_neighbours(fused, filters, weight, lift)

        def _head_with_neighbours(
            self,
            fused: list[tuple[int, float]],
            filters: SearchFilters,
            weight: float,
            n: int,
            lift: fusion.Lift,
        ) -> list[tuple[int, float]]:
            looked.append(True)
            return super()._head_with_neighbours(fused, filters, weight, n, lift)

    return Counting(store, None, ranker=KeywordRanker(store))


@pytest.mark.parametrize("filters", FILTERS, ids=["all", "payments", "infra"])
def test_the_anchor_skips_the_neighbours_only_when_settled(
    seeded: tuple[Store, Seeded], filters: SearchFilters
) -> None:
    """Both paths are taken on the real store, and each anchors on the search's first hit."""
    store, _ = seeded
    looked: list[bool] = []
    engine = counting_neighbours(store, looked)
    paths = set()
    for query in QUERIES:
        looked.clear()
        top = engine.top_observation(query, filters)
        paths.add(bool(looked))
        page = engine.search(query, filters, types=["observations"], limit=1).observations
        assert (top.id if top else None) == (page[0].id if page else None), query
    assert False in paths  # skipped: the first hit leads by more than the share


@pytest.mark.parametrize("day", ["", " on May 4th"], ids=["page", "names-a-day"])
def test_a_search_reads_the_fusion_settings_once(
    seeded: tuple[Store, Seeded], monkeypatch: pytest.MonkeyPatch, day: str
) -> None:
    """The neighbours' share takes its lift from the search's own ``FusionParams``: a page
    (the contenders' neighbours), a query naming a day (every hit's neighbours) and the
    anchor each read the settings once."""
    store, _ = seeded
    read: list[object] = []
    original = fusion.FusionParams.from_settings

    def counted(cls: type[fusion.FusionParams], settings: object) -> fusion.FusionParams:
        read.append(settings)
        return original(settings)

    monkeypatch.setattr(fusion.FusionParams, "from_settings", classmethod(counted))
    looked: list[bool] = []
    engine = counting_neighbours(store, looked)
    shared = False
    for query in QUERIES:
        read.clear()
        looked.clear()
        engine.search(query + day, types=["observations"], limit=5)
        assert len(read) == 1, query
        shared = shared or bool(looked)
        read.clear()
        engine.top_observation(query + day, SearchFilters())
        assert len(read) == 1, query
    assert shared  # the neighbours' share ran


def test_the_anchor_looks_at_the_neighbours_when_the_lead_is_small(tmp_path: Path) -> None:
    """Two memories equally good for the query: the share could decide, so it is looked up."""
    store = Store(tmp_path / "workbench.db")
    with atomic(store.conn):
        for project in ("infra", "webapp"):
            observations.insert(
                store.conn,
                ObservationDraft(type="feature", title="quokka gateway", narrative=project),
                content_session_id=None,
                project=project,
            )
    looked: list[bool] = []
    engine = counting_neighbours(store, looked)
    top = engine.top_observation("quokka gateway", SearchFilters())
    assert looked
    page = engine.search("quokka gateway", types=["observations"], limit=1).observations
    assert top is not None
    assert top.id == page[0].id
    store.close()


def test_the_anchor_is_the_searchs_first_hit_when_the_query_names_a_day(tmp_path: Path) -> None:
    """A named day lifts that day's hits after the neighbours' share: the anchor must not
    skip the share then, even when it cannot change the first hit before the lift.

    Here #3 (not saved on May 4th) leads the fused list by more than the share, so the
    share cannot change the first hit before the lift; #1, #4 and #5 (saved that day) tie
    below it. With the share, #5 (beside #4 in its session) passes #1, and the lift puts the
    day's hits first: the search's first hit is #5. The anchor skipped the share and was #1.
    """
    store = Store(tmp_path / "workbench.db")
    day = int(datetime(2026, 5, 4, 12, tzinfo=UTC).timestamp() * 1000)
    other = int(datetime(2026, 6, 9, 12, tzinfo=UTC).timestamp() * 1000)
    rows = [
        ("zebra lynx", "s2", day),
        ("zebra", "s1", other),
        ("otter zebra lynx", "s3", other),
        ("quokka zebra", "s2", day),
        ("otter", "s2", day),
    ]
    with atomic(store.conn):
        for k, (title, session, when) in enumerate(rows):
            observations.insert(
                store.conn,
                ObservationDraft(type="feature", title=title, narrative="notes"),
                content_session_id=session,
                project="p",
                created_ms=when + k,
            )
    # Stop 28's neighbours' share (``add``, linear coverage), under which #5 passes #1; under
    # today's ``toward`` #1 stays first either way, and the case would not test the skip.
    settings = load_settings(
        tmp_path / "data",
        search_neighbour_lift="add",
        search_neighbour_weight=0.1,
        search_coverage_power=1.0,
        search_fts_weight=0.4,
        search_vector_weight=0.6,
    )
    engine = SearchEngine(store, settings, ranker=KeywordRanker(store))
    query = "otter zebra on May 4th"
    page = engine.search(query, types=["observations"], limit=1).observations
    top = engine.top_observation(query, SearchFilters())
    assert top is not None
    assert (top.id, top.score) == (page[0].id, page[0].score) == (5, page[0].score)
    assert engine.timeline(query=query).anchor.id == 5
    store.close()


@pytest.mark.parametrize("filters", FILTERS, ids=["all", "payments", "infra"])
def test_hybrid_ranks_the_other_kinds_as_alone(
    seeded: tuple[Store, Seeded], filters: SearchFilters
) -> None:
    store, _ = seeded
    engine = SearchEngine(store, None, ranker=KeywordRanker(store))
    totals_of: dict[str, tuple[int, bool]] = {}
    for query in QUERIES:
        every = engine.search(query, filters, limit=20)
        assert every.mode == "hybrid"
        for kind in ("observations", "sessions", "prompts"):
            alone = engine.search(query, filters, types=[kind], limit=20)
            got = [h.model_dump() for h in getattr(every, kind)]
            assert got == [h.model_dump() for h in getattr(alone, kind)], (query, kind)
            totals_of[kind] = (alone.total_results or 0, alone.total_is_lower_bound)
        summed = sum(n for n, _ in totals_of.values())
        flagged = any(flag for _, flag in totals_of.values())
        assert (every.total_results, every.total_is_lower_bound) == (summed, flagged), query


def hybrid_with_vectors_held_until_prompts(store: Store, module: Any, name: str) -> SearchResult:
    """A hybrid search whose vector side waits until ``module.name`` (called once per kind)
    is done for prompts: it is released only if that call comes before the search waits for
    the vector list (else it waits 5 s and ``released`` says so)."""
    prompts_done = threading.Event()
    released: list[bool] = []
    original = getattr(module, name)

    class Held(KeywordRanker):
        def rank(
            self, query: str, k: int, allowed_ids: Sequence[int] | None
        ) -> list[tuple[int, float]]:
            if threading.current_thread().name.startswith("workbench-vector"):
                released.append(prompts_done.wait(timeout=5))
            return super().rank(query, k, allowed_ids)

    def watched(conn: Any, kind: Kind, *args: Any, **kwargs: Any) -> Any:
        done = original(conn, kind, *args, **kwargs)
        if kind == "prompts":
            prompts_done.set()
        return done

    mp = pytest.MonkeyPatch()
    mp.setattr(module, name, watched)
    try:
        result = SearchEngine(store, None, ranker=Held(store)).search("refund charged twice")
    finally:
        mp.undo()
    assert released == [True]
    assert result.mode == "hybrid"
    return result


def test_hybrid_ranks_the_other_kinds_before_it_waits(seeded: tuple[Store, Seeded]) -> None:
    """The vector side is held until prompts are ranked: that happens only if the search
    ranks the other kinds before it waits for the vector list (else it waits 5 s, fails)."""
    store, _ = seeded
    result = hybrid_with_vectors_held_until_prompts(store, fts, "rank")
    assert result.observations


def total_by_scratch(
    conn: Any, query: str, vector_ids: list[int], text_ids: set[int], at_least: int
) -> tuple[tuple[int, bool], int]:
    """An unfiltered observations total as ``totals.count`` took it before (the candidates
    full text misses asked of a scratch index of their text, ``fusion.matching``), and the
    full-text matches it counted (up to the cap + 1)."""
    pieces = fts.query_pieces(query)
    expression = " OR ".join([p for p in pieces if " " not in p] or pieces)
    cap = totals.COUNT_CAP
    sql = "SELECT count(*) FROM (SELECT 1 FROM observations_fts WHERE observations_fts MATCH ?"
    counted = int(conn.execute(f"{sql} LIMIT ?)", (expression, cap + 1)).fetchone()[0])
    others = sorted({i for i in vector_ids if i not in text_ids})
    extra = len(others) - len(fusion.matching(conn, "observations", expression, others))
    total = max(min(counted, cap) + extra, at_least), counted > cap or bool(vector_ids)
    return total, counted


@pytest.mark.parametrize("cap", [1_000, 3])
def test_a_total_with_candidates_is_the_scratch_indexs(
    seeded: tuple[Store, Seeded], cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = seeded
    monkeypatch.setattr(totals, "COUNT_CAP", cap)
    conn = store.conn
    ranker = KeywordRanker(store)
    every_id = [int(r[0]) for r in conn.execute("SELECT id FROM observations")]
    below = past = 0
    for query in [*QUERIES, "refund", "webhook retry backoff", "zzz nothing here"]:
        ranked = fts.rank(conn, "observations", query, limit=FUSION_DEPTH)
        text_ids = {i for i, _ in ranked}
        for vector_ids in ([i for i, _ in ranker.rank(query, FUSION_DEPTH, None)], every_id):
            got = totals.count(
                conn,
                "observations",
                query,
                SearchFilters(),
                vector_ids=vector_ids,
                text_ids=text_ids,
                at_least=len(ranked),
            )
            want, counted = total_by_scratch(conn, query, vector_ids, text_ids, len(ranked))
            if counted > cap:  # past the cap: the cap alone (tests/test_search_total.py)
                past += 1
                assert got == (max(cap, len(ranked)), True), query
            else:
                below += 1
                assert got == want, query
    # Both branches ran: every query below the real cap (a small store), some past a tiny one.
    assert (below, past) == (2 * (len(QUERIES) + 3), 0) if cap == 1_000 else below * past > 0


def test_hybrid_reads_and_counts_the_other_kinds_before_it_waits(
    seeded: tuple[Store, Seeded],
) -> None:
    """As above, but the vector side is held until the prompts' page is read and counted:
    the summaries' and prompts' hits and totals are done while the vector side runs."""
    store, _ = seeded
    result = hybrid_with_vectors_held_until_prompts(store, totals, "count")
    assert result.observations
    assert result.prompts
