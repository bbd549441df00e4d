"""The search engine on a real store: relevance, filters, ordering, paging, fusion, timeline."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.relevance_set import OBSERVATIONS, QUERIES, SESSIONS, Seeded, at, seed
from workbench.errors import InvalidInput, NotFound
from workbench.models import OBSERVATION_TYPES
from workbench.recall import compact
from workbench.recall.filters import SearchFilters
from workbench.recall.fusion import FusionParams
from workbench.recall.search import SearchEngine, VectorRanker, rrf
from workbench.store.database import Store

TOP_K = 3


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Seeded]]:
    store = Store(tmp_path_factory.mktemp("search") / "workbench.db")
    labels = seed(store)
    yield store, labels
    store.close()


@pytest.fixture
def engine(seeded: tuple[Store, Seeded]) -> SearchEngine:
    return SearchEngine(seeded[0], None)


@pytest.fixture
def labels(seeded: tuple[Store, Seeded]) -> Seeded:
    return seeded[1]


def obs_labels(engine: SearchEngine, labels: Seeded, query: str | None, **kw: object) -> list[str]:
    result = engine.search(query, types=["observations"], **kw)  # type: ignore[arg-type]
    return labels.labels([h.id for h in result.observations])


class KeywordRanker:
    """A real (tiny) vector ranker: bag-of-words overlap on the stored titles.

    It implements the VectorRanker protocol, so fusion, allowed-id filtering and degradation
    are tested through the same interface the embedding ranker uses.
    """

    name = "keywords"

    def __init__(self, store: Store, *, up: bool = True, fail: bool = False) -> None:
        self.store = store
        self.up = up
        self.fail = fail
        self.calls: list[Sequence[int] | None] = []

    def available(self) -> bool:
        return self.up

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        self.calls.append(allowed_ids)
        if self.fail:
            raise RuntimeError("index file is corrupt")
        words = set(query.lower().split())
        rows = self.store.conn.execute("SELECT id, title FROM observations").fetchall()
        scored = [(int(r[0]), float(len(words & set(r[1].lower().split())))) for r in rows]
        scored = [pair for pair in scored if pair[1] > 0]
        scored.sort(key=lambda p: (-p[1], p[0]))
        return scored[:k]


# -- relevance ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["fts", "hybrid"])
@pytest.mark.parametrize(("query", "relevant"), list(QUERIES.items()))
def test_relevant_observations_rank_in_top_k(
    engine: SearchEngine, labels: Seeded, query: str, relevant: tuple[str, ...], mode: str
) -> None:
    found = obs_labels(engine, labels, query, mode=mode, limit=TOP_K)
    assert set(relevant) <= set(found), f"{query!r} → {found}"


def test_hybrid_without_ranker_is_fts_and_says_so(engine: SearchEngine) -> None:
    result = engine.search("refund charged twice")
    assert result.mode == "fts"
    assert result.degraded
    assert "semantic search unavailable" in result.degraded
    assert engine.search("refund", mode="fts").degraded is None


def test_search_returns_all_three_kinds_with_index_fields(
    engine: SearchEngine, labels: Seeded
) -> None:
    result = engine.search("login redirect loop after session expiry")
    assert result.observations
    assert result.sessions
    assert result.prompts
    hit = result.observations[0]
    assert hit.id == labels.ids["auth-redirect-loop"]
    assert hit.type == "bugfix"
    assert hit.kind == "observation"
    assert hit.title == "Login redirect loop after session expiry"
    assert hit.project == "webapp"
    assert hit.created_at.startswith("2026-11-04T09:00")
    assert hit.score > 0
    assert hit.tokens > 20
    assert hit.ranks == {"fts": 1}
    assert result.sessions[0].type == "summary"
    assert result.sessions[0].kind == "summary"
    assert result.prompts[0].type == "prompt"
    assert result.prompts[0].title.startswith("Work on")
    assert result.total == len(result.hits())


# -- filters -----------------------------------------------------------------------------------
def test_project_filter(engine: SearchEngine, labels: Seeded) -> None:
    result = engine.search("retry", SearchFilters(project="webapp"))
    assert {h.project for h in result.hits()} == {"webapp"}
    two = engine.search("retry", SearchFilters(projects="webapp,payments-api"))
    assert {h.project for h in two.hits()} == {"webapp", "payments-api"}


def test_obs_type_filter_and_its_error(engine: SearchEngine) -> None:
    result = engine.search("retry", SearchFilters(obs_types=["feature", "change"]))
    assert result.observations
    assert {h.type for h in result.observations} <= {"feature", "change"}
    assert result.sessions == []
    assert result.prompts == []
    with pytest.raises(InvalidInput) as err:
        SearchFilters(obs_types="bugfix,oops")
    assert "'oops'" in err.value.message
    assert all(t in err.value.message for t in OBSERVATION_TYPES)


def test_files_prefix_filter(engine: SearchEngine, labels: Seeded) -> None:
    relative = obs_labels_f(engine, labels, SearchFilters(files="src/refunds"))
    assert set(relative) == {"refund-idempotency"}
    absolute = obs_labels_f(engine, labels, SearchFilters(files="/home/dev/src/webapp/src/auth"))
    assert set(absolute) == {"auth-redirect-loop", "samesite-cookie"}
    read_only = obs_labels_f(engine, labels, SearchFilters(files=["data/iso4217.csv"]))
    assert read_only == ["currency-table"]
    assert obs_labels_f(engine, labels, SearchFilters(files="/src/refunds")) == []  # absolute
    assert obs_labels_f(engine, labels, SearchFilters(files="SRC/REFUNDS")) == []  # case


def obs_labels_f(engine: SearchEngine, labels: Seeded, filters: SearchFilters) -> list[str]:
    result = engine.search(None, filters, types=["observations"], limit=100)
    return labels.labels([h.id for h in result.observations])


def test_concepts_filter_is_any_and_case_insensitive(engine: SearchEngine, labels: Seeded) -> None:
    found = obs_labels_f(engine, labels, SearchFilters(concepts="IDEMPOTENCY,Theming"))
    assert set(found) == {"refund-idempotency", "dark-mode"}


def test_date_range_end_date_is_inclusive(engine: SearchEngine, labels: Seeded) -> None:
    day = obs_labels_f(
        engine, labels, SearchFilters(date_start="2026-11-03", date_end="2026-11-03")
    )
    expected = {o.label for o in OBSERVATIONS if SESSIONS[o.session][2] == 3}
    assert set(day) == expected
    assert expected
    instant = SearchFilters(date_start="2026-11-03T09:00:00Z", date_end="2026-11-03T09:00:00Z")
    assert obs_labels_f(engine, labels, instant) == ["refund-idempotency"]
    with pytest.raises(InvalidInput, match="dateStart is after dateEnd"):
        SearchFilters(date_start="2026-11-05", date_end="2026-11-01")
    with pytest.raises(InvalidInput, match=r"dateEnd='yesterday' is not an ISO date.*2026-12-01"):
        SearchFilters(date_end="yesterday")


def test_platform_source_joins_sessions(engine: SearchEngine, labels: Seeded) -> None:
    result = engine.search(None, SearchFilters(platform_source="cursor"), limit=100)
    cursor_sessions = {s for s, (_, p, _) in SESSIONS.items() if p == "cursor"}
    assert {h.content_session_id for h in result.hits()} == cursor_sessions
    assert result.sessions
    assert result.prompts


def test_combined_filters(engine: SearchEngine, labels: Seeded) -> None:
    filters = SearchFilters(
        project="infra",
        obs_types=["refactor", "security_note"],
        concepts=["caching", "vault"],
        date_start="2026-11-14",
        date_end="2026-11-14",
        platform_source="cursor",
    )
    assert set(obs_labels_f(engine, labels, filters)) == {"ci-cache", "vault-secrets"}
    with_query = engine.search("pipeline cache", filters, types=["observations"])
    assert labels.labels([h.id for h in with_query.observations]) == ["ci-cache"]


@pytest.mark.parametrize(
    "value", [["bugfix", "feature"], '["bugfix", "feature"]', "bugfix,feature", ["bugfix,feature"]]
)
def test_list_params_accept_lists_json_and_csv(value: object) -> None:
    assert SearchFilters(obs_types=value).obs_types == ["bugfix", "feature"]


def test_bad_filters_are_invalid_input_with_the_fix() -> None:
    with pytest.raises(InvalidInput, match="not valid JSON"):
        SearchFilters(concepts="[oops")
    with pytest.raises(InvalidInput, match="filters are project"):
        SearchFilters(colour="red")  # type: ignore[call-arg]
    with pytest.raises(InvalidInput, match="must be text"):
        SearchFilters(concepts=[1, 2])


# -- query rules, ordering, paging -------------------------------------------------------------
def test_no_query_and_no_filter_is_an_error(engine: SearchEngine) -> None:
    for query in (None, "", "   "):
        with pytest.raises(InvalidInput, match="give a query or at least one filter"):
            engine.search(query)


def test_filters_without_query_list_by_date(engine: SearchEngine) -> None:
    result = engine.search(None, SearchFilters(project="payments-api"), limit=100)
    epochs = [h.created_at_epoch for h in result.observations]
    assert epochs == sorted(epochs, reverse=True)
    assert len(epochs) == 16
    oldest = engine.search(None, SearchFilters(project="payments-api"), order_by="date_asc")
    assert oldest.observations[0].created_at_epoch == min(epochs)


@pytest.mark.parametrize("order", ["date_desc", "date_asc"])
def test_date_order_sorts_the_matched_set(engine: SearchEngine, order: str) -> None:
    relevance = engine.search("database", types=["observations"], limit=100)
    dated = engine.search("database", types=["observations"], order_by=order, limit=100)
    assert {h.id for h in dated.observations} == {h.id for h in relevance.observations}
    epochs = [h.created_at_epoch for h in dated.observations]
    assert epochs == sorted(epochs, reverse=order == "date_desc")


def test_pagination_is_disjoint_and_ordered(engine: SearchEngine) -> None:
    everything = [
        h.id for h in engine.search("the api", types=["observations"], limit=30).observations
    ]
    pages = [
        [
            h.id
            for h in engine.search(
                "the api", types=["observations"], limit=4, offset=o
            ).observations
        ]
        for o in (0, 4, 8)
    ]
    assert sum(pages, []) == everything[:12]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"mode": "semantic"}, "mode='semantic' is not allowed; use hybrid | fts | vector"),
        ({"order_by": "newest"}, "order_by='newest' is not allowed"),
        ({"limit": 0}, "limit must be an integer from 1 to 100"),
        ({"limit": 101}, "limit must be an integer from 1 to 100"),
        ({"offset": -1}, "offset must be an integer"),
        ({"types": "events"}, "'events' is not a search type"),
    ],
)
def test_bad_search_arguments(engine: SearchEngine, kw: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("|", r"\|").replace("(", r"\(")):
        engine.search("refund", **kw)  # type: ignore[arg-type]


# -- the vector ranker seam ---------------------------------------------------------------------
def test_vector_mode_without_ranker_says_why(engine: SearchEngine) -> None:
    with pytest.raises(InvalidInput, match="semantic search is unavailable: no embedding model"):
        engine.search("refund", mode="vector")


def test_hybrid_fuses_both_rankers(seeded: tuple[Store, Seeded], labels: Seeded) -> None:
    store, _ = seeded
    ranker = KeywordRanker(store)
    assert isinstance(ranker, VectorRanker)
    # Neighbouring turns off: the score below is the fusion's alone.
    engine = SearchEngine(store, SimpleNamespace(search_neighbour_weight=0.0), ranker=ranker)
    result = engine.search("docker image size", types=["observations"])
    assert result.mode == "hybrid"
    assert result.degraded is None
    top = result.observations[0]
    assert top.id == labels.ids["docker-slim"]
    assert top.ranks == {"fts": 1, "keywords": 1}
    assert top.rankers == ["fts", "vector"]
    # Weighted fusion (default weights): w_fts · BM25 1st of its list (1.0) × its share of the
    # query (all three words: 1.0) + w_vec · the ranker's similarity (2 title words).
    p = FusionParams()
    assert top.score == pytest.approx(p.fts_weight * 1.0 * 1.0 + p.vector_weight * 2.0)
    assert ranker.calls[0] is None  # unfiltered → no allowed set
    # then, once, the similarity of just the full-text hits it did not list
    listed = {i for i, _ in ranker.rank("docker image size", 100, None)}
    assert len(ranker.calls) == 3  # (+ the call just above)
    assert ranker.calls[1]
    assert not set(ranker.calls[1]) & listed


def test_vector_mode_and_allowed_ids(seeded: tuple[Store, Seeded], labels: Seeded) -> None:
    store, _ = seeded
    ranker = KeywordRanker(store)
    engine = SearchEngine(store, None, ranker=ranker)
    result = engine.search("dark mode theme", SearchFilters(project="webapp"), mode="vector")
    assert result.mode == "vector"
    assert result.observations[0].id == labels.ids["dark-mode"]
    allowed = ranker.calls[-1]
    assert allowed is not None
    assert set(allowed) == {
        v
        for k, v in labels.ids.items()
        if next(o for o in OBSERVATIONS if o.label == k).session.startswith("web")
    }


def test_ranker_that_ignores_allowed_ids_cannot_leak(seeded: tuple[Store, Seeded]) -> None:
    store, _ = seeded

    class Leaky(KeywordRanker):
        def rank(
            self, query: str, k: int, allowed_ids: Sequence[int] | None
        ) -> list[tuple[int, float]]:
            return super().rank(query, k, None)

    engine = SearchEngine(store, None, ranker=Leaky(store))
    result = engine.search("mode theme retry", SearchFilters(project="infra"), mode="vector")
    assert {h.project for h in result.observations} <= {"infra"}


def test_unavailable_or_failing_ranker_degrades_hybrid(seeded: tuple[Store, Seeded]) -> None:
    store, _ = seeded
    down = KeywordRanker(store, up=False)
    down.unavailable_reason = "the FAISS index has not been built; run `workbench reindex`"  # type: ignore[attr-defined]
    result = SearchEngine(store, None, ranker=down).search("refund")
    assert result.mode == "fts"
    assert "workbench reindex" in (result.degraded or "")
    with pytest.raises(InvalidInput, match="workbench reindex"):
        SearchEngine(store, None, ranker=down).search("refund", mode="vector")
    broken = SearchEngine(store, None, ranker=KeywordRanker(store, fail=True)).search("refund")
    assert broken.mode == "fts"
    assert "semantic search failed" in (broken.degraded or "")
    assert broken.observations


def test_rrf() -> None:
    fused = rrf([("a", [1, 2, 3]), ("b", [3, 1])], k=60)
    assert [i for i, _ in fused] == [1, 3, 2]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


# -- the compact index -------------------------------------------------------------------------
def test_compact_index_is_one_line_per_hit(engine: SearchEngine, labels: Seeded) -> None:
    result = engine.search("refunds charged twice", limit=3)
    text = compact.search_index(result)
    lines = text.splitlines()
    assert re.match(r'workbench search "refunds charged twice": \d+ observations?, ', lines[0])
    hit_lines = [ln for ln in lines if ln.startswith("#")]
    assert len(hit_lines) == result.total
    assert hit_lines[0].startswith(
        f"#{labels.ids['refund-idempotency']}  2026-11-03 09:00  bugfix  "
    )
    assert hit_lines[0].endswith(" tokens)")
    assert any(ln.startswith("#S") for ln in hit_lines)
    assert any(ln.startswith("#P") for ln in hit_lines)
    assert "/api/timeline" in lines[-1]
    assert "/api/observations/batch" in lines[-1]
    assert len(text) / 4 / result.total < 60  # compact: well under 100 tokens a hit


# -- timeline ------------------------------------------------------------------------------------
def test_timeline_around_an_observation(engine: SearchEngine, labels: Seeded) -> None:
    anchor = labels.ids["invoice-rounding"]  # pay-2, first observation of the day
    for form in (anchor, str(anchor), f"#{anchor}"):
        timeline = engine.timeline(anchor=form, depth_before=2, depth_after=3)
        assert timeline.anchor.kind == "observation"
        assert timeline.anchor.id == anchor
        observations = [i for i in timeline.items if i.kind == "observation"]
        marked = [i for i in timeline.items if i.is_anchor]
        assert [(m.kind, m.id) for m in marked] == [("observation", anchor)]
        assert len(observations) == 6  # 2 before + anchor + 3 after
        assert {i.project for i in timeline.items} == {"payments-api"}
        epochs = [i.created_at_epoch for i in timeline.items]
        assert epochs == sorted(epochs)
    kinds = {i.kind for i in engine.timeline(anchor=anchor, depth_before=2, depth_after=3).items}
    assert kinds == {"observation", "summary", "prompt"}


def test_timeline_around_a_summary_and_a_time(engine: SearchEngine, labels: Seeded) -> None:
    summary = labels.summaries["web-2"]
    timeline = engine.timeline(anchor=f"S{summary}", depth_before=3, depth_after=0)
    assert [(i.kind, i.id) for i in timeline.items if i.is_anchor] == [("summary", summary)]
    assert timeline.items[-1].is_anchor  # depth_after=0: nothing after the anchor
    assert sum(i.kind == "observation" for i in timeline.items) == 3
    at_time = engine.timeline(anchor="2026-11-12T13:05:00Z", depth_before=1, depth_after=1)
    assert at_time.anchor.kind == "time"
    nearest = [i for i in at_time.items if i.is_anchor]
    assert len(nearest) == 1
    assert nearest[0].id == labels.ids["i18n-plurals"]


def test_timeline_by_query(engine: SearchEngine, labels: Seeded) -> None:
    timeline = engine.timeline(query="websocket memory leak")
    assert timeline.anchor.id == labels.ids["ws-leak"]
    assert timeline.anchor.query
    assert any(i.is_anchor and i.id == labels.ids["ws-leak"] for i in timeline.items)


@pytest.mark.parametrize(
    ("kw", "error", "message"),
    [
        ({"anchor": 1, "query": "x"}, InvalidInput, "either anchor or query, not both"),
        ({}, InvalidInput, "give an anchor or a query"),
        ({"anchor": "  "}, InvalidInput, "give an anchor or a query"),
        ({"anchor": 99999}, NotFound, "no observation with id 99999"),
        ({"anchor": "S99999"}, NotFound, "no summary with id S99999"),
        ({"anchor": "last tuesday"}, InvalidInput, "not an observation id .* ISO timestamp"),
        ({"anchor": "2026-13-45"}, InvalidInput, "ISO timestamp"),
        ({"query": "zzzqqq"}, NotFound, "no observation matches"),
        ({"anchor": 1, "depth_before": 51}, InvalidInput, "depth_before must be an integer"),
        ({"anchor": 1, "depth_after": -1}, InvalidInput, "depth_after must be"),
    ],
)
def test_timeline_errors(
    engine: SearchEngine, kw: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        engine.timeline(**kw)  # type: ignore[arg-type]


def test_timeline_text_marks_the_anchor(engine: SearchEngine, labels: Seeded) -> None:
    text = compact.timeline_text(engine.timeline(anchor=labels.ids["dark-mode"], depth_after=1))
    marked = [ln for ln in text.splitlines() if ln.startswith("> ")]
    assert marked == [ln for ln in marked if "Dark mode theme" in ln]
    assert len(marked) == 1


def test_engine_accepts_a_plain_connection(tmp_path: Path) -> None:
    store = Store(tmp_path / "w.db")
    seeded = seed(store)
    engine = SearchEngine(store.conn)
    assert engine.search("docker image").observations[0].id == seeded.ids["docker-slim"]
    top = engine.search("idempotency key refund").observations[0]
    assert top.created_at_epoch == at(3, 9)
    store.close()
