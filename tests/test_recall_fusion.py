"""Weighted fusion (issue 10, item 1) on constructed ranked lists, its coverage gate on a real
store, its settings, and the ``rankers`` field of a hit.

The report: hybrid (RRF) reached R@10 0.61 where MiniLM alone reached 0.86, because BM25's
weak OR-matches outvoted strong semantic hits. These tests pin the parts of the fix: a
full-text hit matching little of the query is gated out, weights move the balance, equal
scores keep one order, nothing a ranker found is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.conftest import SimilarityRanker, settings_refusal, store_of_titles
from workbench.models import ObservationDraft
from workbench.recall import compact, fusion
from workbench.recall.fusion import FusionParams
from workbench.recall.search import SearchEngine, rankers_of
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

WEIGHTED = FusionParams(method="weighted", fts_weight=0.2, vector_weight=0.8, fts_gate=0.4)


def ids(fused: Sequence[tuple[int, float]]) -> list[int]:
    return [i for i, _ in fused]


# ----- the fusion on constructed lists -----------------------------------------------------------
def test_a_weak_or_match_cannot_outvote_a_strong_semantic_hit() -> None:
    # BM25's 1st (id 7) matched one common word of the query; the vector ranker's 1st (id 3)
    # is a strong semantic hit BM25 never saw. RRF ranks 7 first (1/61 + 1/62 > 1/61 + 0)…
    text = [(7, 9.0), (8, 4.0)]
    vector = [(3, 0.71), (7, 0.40), (9, 0.35)]
    coverage = {7: 0.15, 8: 0.10}
    assert ids(fusion.rrf([("fts", ids(text)), ("vector", ids(vector))]))[0] == 7
    # …the gate does not: a hit matching 15% of the query is no evidence at all.
    fused = fusion.weighted(text, vector, coverage, WEIGHTED)
    assert ids(fused)[:3] == [3, 7, 9]
    # Without the gate, with linear coverage and full-text weight to spare, the same weak match
    # wins: the gate or the coverage calibration (not the weights alone) protects the hit.
    ungated = FusionParams(fts_weight=0.9, vector_weight=0.1, fts_gate=0.0, coverage_power=1.0)
    assert ids(fusion.weighted(text, vector, coverage, ungated))[0] == 7
    calibrated = FusionParams(fts_weight=0.9, vector_weight=0.1, fts_gate=0.0, coverage_power=2.0)
    assert ids(fusion.weighted(text, vector, coverage, calibrated))[0] == 3


def test_a_strong_full_text_match_still_counts() -> None:
    # A query whose rare words all sit in id 5: BM25 is sure, the vector ranker mildly prefers
    # id 6. Full coverage passes the gate and the full-text evidence decides.
    text = [(5, 12.0), (6, 3.0)]
    vector = [(6, 0.52), (5, 0.47)]
    coverage = {5: 1.0, 6: 0.2}
    assert ids(fusion.weighted(text, vector, coverage, WEIGHTED))[:2] == [5, 6]


def test_weights_are_respected() -> None:
    text = [(1, 10.0), (2, 9.0), (3, 8.0)]
    vector = [(3, 0.9), (2, 0.6), (1, 0.3)]
    full = {1: 1.0, 2: 1.0, 3: 1.0}
    only_text = FusionParams(fts_weight=1.0, vector_weight=0.0, fts_gate=0.0)
    only_vector = FusionParams(fts_weight=0.0, vector_weight=1.0, fts_gate=0.0)
    assert ids(fusion.weighted(text, vector, full, only_text)) == [1, 2, 3]
    assert ids(fusion.weighted(text, vector, full, only_vector)) == [3, 2, 1]
    # The score is exactly the weighted sum: BM25 max-normalised × coverage ** power, cosine as
    # is (power 2 by default: i21-fusion's calibration).
    half = FusionParams(fts_weight=0.5, vector_weight=0.5, fts_gate=0.0)
    scores = dict(fusion.weighted(text, vector, {1: 1.0, 2: 0.5, 3: 1.0}, half))
    assert scores[1] == pytest.approx(0.5 * 1.0 + 0.5 * 0.3)
    assert scores[2] == pytest.approx(0.5 * 0.9 * 0.5**2 + 0.5 * 0.6)
    assert scores[3] == pytest.approx(0.5 * 0.8 + 0.5 * 0.9)


def test_ties_are_stable_best_rank_then_id() -> None:
    # All four score 0.5 (from one ranker each). 4 and 9 were each 1st of a list: the lower id
    # first; then 2 (2nd by vectors) before 8 (3rd).
    text = [(4, 5.0)]
    vector = [(9, 0.5), (2, 0.5), (8, 0.5)]
    params = FusionParams(fts_weight=0.5, vector_weight=1.0, fts_gate=0.0)
    fused = fusion.weighted(text, vector, {4: 1.0}, params)
    assert ids(fused) == [4, 9, 2, 8]
    again = fusion.weighted(list(text), list(vector), {4: 1.0}, params)
    assert fused == again


def test_gated_hits_are_kept_last_in_bm25_order() -> None:
    text = [(1, 9.0), (2, 8.0), (3, 7.0)]
    vector = [(4, 0.6), (5, -0.1)]
    fused = fusion.weighted(text, vector, {1: 0.1, 2: 0.9, 3: 0.2}, WEIGHTED)
    assert ids(fused) == [4, 2, 1, 3, 5]  # nothing any ranker found is dropped
    assert dict(fused)[1] == 0.0
    assert dict(fused)[5] == 0.0  # a negative cosine is no evidence either


def test_full_text_hits_beyond_the_vector_list_get_their_real_cosine() -> None:
    # 2 is beyond the vector ranker's list; asked for it alone, the ranker says 0.5.
    text = [(1, 10.0), (2, 10.0)]
    vector = [(1, 0.55), (3, 0.54)]
    both = {1: 1.0, 2: 1.0}
    without = dict(fusion.weighted(text, vector, both, WEIGHTED))
    with_cosine = dict(fusion.weighted(text, vector, both, WEIGHTED, cosines={2: 0.5}))
    assert without[2] == pytest.approx(0.2)
    assert with_cosine[2] == pytest.approx(0.2 + 0.8 * 0.5)


def test_a_memory_not_embedded_yet_ranks_by_its_words_with_both_weights() -> None:
    # 9 was saved a second ago: a perfect full-text match the index does not hold yet. As a
    # "full-text only" hit it would score 0.2 and sink under any fair semantic hit.
    text = [(9, 12.0), (4, 3.0)]
    vector = [(4, 0.6), (5, 0.55)]
    fused = fusion.weighted(text, vector, {9: 1.0, 4: 0.5}, WEIGHTED, unembedded={9})
    assert ids(fused)[0] == 9
    assert dict(fused)[9] == pytest.approx(1.0)  # (0.2 + 0.8) · 1.0 · 1.0
    gated = fusion.weighted(text, vector, {9: 0.1, 4: 0.5}, WEIGHTED, unembedded={9})
    assert ids(gated)[-1] == 9  # the gate still applies


def test_rrf_is_still_there_to_compare() -> None:
    fused = fusion.fuse([(1, 3.0), (2, 2.0)], [(2, 0.9)], {}, FusionParams(method="rrf"))
    assert ids(fused) == [2, 1]


def test_rankers_of_names_the_kind_of_ranker() -> None:
    assert rankers_of({"fts": 1}) == ["fts"]
    assert rankers_of({"minilm": 3}) == ["vector"]
    assert rankers_of({"minilm": 3, "fts": 1}) == ["fts", "vector"]
    assert rankers_of({}) == []


# ----- coverage on a real store ------------------------------------------------------------------
TITLES = [
    "Stripe webhook retries issued duplicate refunds",
    "Refund report column renamed",
    "Webhook signature check",
    *[f"Refactored module {n} for clarity" for n in range(20)],
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with store_of_titles(tmp_path / "workbench.db", TITLES) as s:
        yield s


def test_coverage_is_the_share_of_the_query_a_hit_matches(store: Store) -> None:
    conn = store.conn
    cover = fusion.coverage(
        conn, "observations", "duplicate refunds from webhook retries", [1, 2, 3]
    )
    assert cover[1] == pytest.approx(1.0)  # every piece
    # One piece each of equal rarity (refund, webhook): the same share, under the default gate.
    assert cover[2] == pytest.approx(cover[3])
    assert 0 < cover[2] < FusionParams().fts_gate
    # A word the memory has never seen still counts against a partial match.
    with_unknown = fusion.coverage(conn, "observations", "refund chargeback", [2])
    assert with_unknown[2] < 0.5  # refund alone would be all of the query's known words
    assert fusion.coverage(conn, "observations", "   ", [1]) == {}


def test_coverage_reads_only_so_a_read_only_store_can_fuse(store: Store, tmp_path: Path) -> None:
    # The CLI searches a read-only connection (query_only): coverage must never write to it.
    query = "duplicate refunds from webhook retries"
    expected = fusion.coverage(store.conn, "observations", query, [1, 2, 3])
    with Store(tmp_path / "workbench.db", readonly=True) as ro:
        assert fusion.coverage(ro.conn, "observations", query, [3, 2, 1, 2]) == expected


def test_hybrid_through_the_engine_uses_the_settings(store: Store, tmp_path: Path) -> None:
    class TitleRanker:
        """A real vector ranker at the protocol level: fixed similarities by id."""

        name = "titles"

        def available(self) -> bool:
            return True

        def rank(self, query: str, k: int, allowed: object) -> list[tuple[int, float]]:
            return [(2, 0.62), (3, 0.30), (1, 0.28)][:k]

    query = "report column duplicate"  # BM25: 2 matches 2 pieces of 3, 1 matches 1
    rrf_settings = load_settings(tmp_path / "a", search_fusion="rrf")
    weighted = load_settings(tmp_path / "b")
    for settings in (rrf_settings, weighted):
        result = SearchEngine(store, settings, TitleRanker()).search(
            query, types="observations", limit=5
        )
        assert result.mode == "hybrid"
        top = result.observations[0]
        assert top.id == 2
        assert top.rankers == ["fts", "vector"]
        assert set(top.ranks) == {"fts", "titles"}
    found = {h.id: h.rankers for h in result.observations}
    assert found[3] == ["vector"]
    text = compact.search_index(result)
    assert "[fts+vector]  (~" in text
    assert "[vector]  (~" in text
    fts_only = SearchEngine(store, weighted, TitleRanker()).search(query, mode="fts")
    assert all(h.rankers == ["fts"] for h in fts_only.observations)
    assert "[fts]" not in compact.search_index(fts_only)  # one ranker: the header says it


def test_a_memory_saved_before_its_embedding_is_found_by_its_words(
    store: Store, tmp_path: Path
) -> None:
    # Every memory but the newest is embedded; the newest is the exact answer by its words.
    with atomic(store.conn):
        fresh, _ = observations.insert(
            store.conn,
            ObservationDraft(title="Ledger reconciliation drift fixed in nightly batch"),
            content_session_id="s",
            project="p",
        )
    held = SimilarityRanker({i: 0.45 - i / 100 for i in range(1, len(TITLES) + 1)}, "held")
    # Neighbouring turns off: the score below is the fusion's alone.
    engine = SearchEngine(store, load_settings(tmp_path, search_neighbour_weight=0.0), held)
    result = engine.search("ledger reconciliation drift", types="observations", limit=5)
    assert result.mode == "hybrid"
    assert result.observations[0].id == fresh
    assert result.observations[0].rankers == ["fts"]
    # Once embedded, it competes on both halves like any other memory.
    held.similarity[fresh] = 0.2
    again = engine.search("ledger reconciliation drift", types="observations", limit=5)
    assert again.observations[0].id == fresh
    p = FusionParams()
    assert again.observations[0].score == pytest.approx(p.fts_weight + p.vector_weight * 0.2)


# ----- settings ----------------------------------------------------------------------------------
def test_fusion_defaults_live_in_settings(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert FusionParams.from_settings(settings) == FusionParams()
    assert FusionParams.from_settings(None) == FusionParams()
    assert settings.search_fusion == "weighted"
    assert 0 < settings.prompt_injection_min_similarity < 1


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        ({"search_fts_weight": 0, "search_vector_weight": 0}, "both 0"),
        ({"search_fts_gate": 1.5}, "less than or equal to 1"),
        ({"search_vector_weight": -0.1}, "greater than or equal to 0"),
        ({"search_fusion": "max"}, "'weighted' or 'rrf'"),
        ({"prompt_injection_min_similarity": 2}, "less than or equal to 1"),
    ],
)
def test_bad_fusion_settings_are_refused_with_the_fix(
    tmp_path: Path, overrides: dict[str, object], says: str
) -> None:
    assert says in settings_refusal(tmp_path, **overrides)


def test_both_weights_zero_in_the_file_falls_back_and_warns(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"search_fts_weight": 0, "search_vector_weight": 0}), "utf-8"
    )
    settings = load_settings(tmp_path)
    # the bad key dropped (its default back), the service starts
    assert settings.search_vector_weight == FusionParams().vector_weight
    assert any("search_vector_weight" in w for w in settings.load_warnings)
