"""The second stage (issue 10, item 2): hybrid's fused top-N reordered by word-level evidence.

On a real store with a vector ranker at the protocol level (fixed similarities, as in
``test_recall_fusion``): an exact identifier match that fusion put second comes first once
reranking is on; the same ids come back (only reordered); a bad model file, or a failure in
the stage, gives the fused order; fts and vector modes are never reranked; a trained model in
the data dir is used, and hits say which reranker placed them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from tests.conftest import SimilarityRanker, store_of_titles
from workbench.recall import rerank, rerank_features, rerank_tokens
from workbench.recall.rerank_features import FEATURES, Candidates
from workbench.recall.search import SearchEngine
from workbench.settings import load_settings
from workbench.store.connection import atomic
from workbench.store.database import Store

TARGET = "Bumped cypress for TimelineScheduler"
MEMORIES = [
    TARGET,  # 1: the exact answer, by its identifier and its words
    "Scheduling the timeline of frontend test upgrades",  # 2: semantically closest, vaguer
    "Cypress flaky on CI, retried the suite",  # 3
    "Calendar view renders events in the wrong week",  # 4
    "Upgraded webpack and babel presets",  # 5
]
QUERY = "TimelineScheduler cypress bump"


SIMILARITY = {2: 0.70, 1: 0.35, 3: 0.30, 4: 0.25, 5: 0.10}


def token_table(onnx_model: Path, folder: Path) -> Path:
    """A real MaxSim token table from the shipped weights, holding only the rows of the word
    pieces of ``QUERY`` and ``MEMORIES`` (so it builds in a second), for the stages that read one
    (test_rerank_maxsim, test_rerank_learned)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(onnx_model / "tokenizer.json"))
    pieces = {i for text in [QUERY, *MEMORIES] for i in tokenizer.encode(text).ids}
    return rerank_tokens.build(folder / rerank_tokens.TABLE_NAME, onnx_model, token_ids=pieces)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with store_of_titles(tmp_path / "workbench.db", MEMORIES) as s:
        yield s


# The fusion these tests were built on (before issue 21), where the semantically closest memory
# leads the fused order, so that the second stage has something to fix.
VECTOR_LED: dict[str, object] = {
    "search_fts_weight": 0.2,
    "search_vector_weight": 0.8,
    "search_fts_gate": 0.4,
    "search_neighbour_weight": 0.0,
}


def search(store: Store, settings: object, mode: str = "hybrid", limit: int = 5) -> list[int]:
    engine = SearchEngine(store, settings, SimilarityRanker(SIMILARITY))
    return [
        h.id
        for h in engine.search(QUERY, types="observations", mode=mode, limit=limit).observations
    ]


def test_an_exact_identifier_match_comes_first_once_reranked(store: Store, tmp_path: Path) -> None:
    off = load_settings(tmp_path / "off", search_rerank=False, **VECTOR_LED)
    on = load_settings(
        tmp_path / "on", search_rerank=True, search_rerank_method="features", **VECTOR_LED
    )
    # Fusion alone: the semantically closest (0.8 · 0.70) beats the exact answer.
    assert search(store, off)[:2] == [2, 1]
    assert search(store, on)[:2] == [1, 2]
    engine = SearchEngine(store, on, SimilarityRanker(SIMILARITY))
    hits = engine.search(QUERY, types="observations", limit=5).observations
    assert {h.rerank for h in hits} == {"features-default"}
    assert hits[0].rankers == ["fts", "vector"]  # the contract fields stay as they were
    plain = SearchEngine(store, off, SimilarityRanker(SIMILARITY)).search(QUERY, limit=5)
    assert all(h.rerank is None for h in plain.observations)
    assert plain.to_json()["observations"][0]["rerank"] is None


def test_rerank_only_reorders(store: Store, tmp_path: Path) -> None:
    off = search(store, load_settings(tmp_path / "off", search_rerank=False), limit=50)
    on = search(
        store,
        load_settings(tmp_path / "on", search_rerank=True, search_rerank_method="features"),
        limit=50,
    )
    assert sorted(on) == sorted(off)
    assert len(on) == len(set(on)) == len(MEMORIES)
    # Paging sees one order: page 2 continues page 1.
    settings = load_settings(tmp_path / "on2", search_rerank=True, search_rerank_method="features")
    engine = SearchEngine(store, settings, SimilarityRanker(SIMILARITY))
    pages = [
        [h.id for h in engine.search(QUERY, types="observations", limit=2, offset=o).observations]
        for o in (0, 2, 4)
    ]
    assert [i for page in pages for i in page] == on


def test_fts_and_vector_modes_are_never_reranked(store: Store, tmp_path: Path) -> None:
    on = load_settings(tmp_path, search_rerank=True, search_rerank_method="features")
    off = load_settings(tmp_path / "off", search_rerank=False)
    engine = SearchEngine(store, on, SimilarityRanker(SIMILARITY))  # one engine, reused
    for mode in ("fts", "vector"):
        assert search(store, on, mode) == search(store, off, mode)
        assert engine.search(QUERY, types="observations").observations[0].rerank is not None
        hits = engine.search(QUERY, types="observations", mode=mode).observations
        assert all(h.rerank is None for h in hits)


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"version": 1, "features": ["fused"], "weights": {"fused": 1.0}}),
        json.dumps({"version": 1, "features": list(FEATURES), "weights": {}}),
        json.dumps(
            {"version": 1, "features": list(FEATURES), "weights": dict.fromkeys(FEATURES, "x")}
        ),
        json.dumps([1, 2]),
    ],
)
def test_an_unreadable_model_file_means_the_default(
    store: Store, tmp_path: Path, content: str
) -> None:
    settings = load_settings(tmp_path, search_rerank=True, search_rerank_method="features")
    (tmp_path / rerank.MODEL_FILE).write_text(content, "utf-8")
    assert rerank.load_model(settings) == rerank.Model.default()
    assert search(store, settings)[:2] == [1, 2]


def test_a_failing_stage_gives_the_fused_order(store: Store, tmp_path: Path) -> None:
    # A bench-style settings object with a depth that is not a number: the stage raises inside
    # and the search answers in fused order, unmarked.
    broken = SimpleNamespace(
        search_rerank=True,
        search_rerank_method="features",
        search_rerank_depth="deep",
        data_dir=tmp_path,
        **VECTOR_LED,
    )
    engine = SearchEngine(store, broken, SimilarityRanker(SIMILARITY))
    hits = engine.search(QUERY, types="observations", limit=5).observations
    assert [h.id for h in hits][:2] == [2, 1]
    assert all(h.rerank is None for h in hits)


def test_a_trained_model_in_the_data_dir_is_used(store: Store, tmp_path: Path) -> None:
    settings = load_settings(tmp_path, search_rerank=True, search_rerank_method="features")
    # Weights that only trust recency: the newest memory (5) first, then 4, 3…
    weights = tuple(1.0 if name == "recency" else 0.0 for name in FEATURES)
    path = rerank.save_model(settings, rerank.Model(weights, "trained"))
    assert path == tmp_path / "rerank.json"
    with atomic(store.conn):  # distinct times, oldest first
        for n in range(1, len(MEMORIES) + 1):
            store.conn.execute(
                "UPDATE observations SET created_at_epoch = ? WHERE id = ?", (1000 * n, n)
            )
    engine = SearchEngine(store, settings, SimilarityRanker(SIMILARITY))
    hits = engine.search(QUERY, types="observations", limit=5).observations
    assert [h.id for h in hits] == [5, 4, 3, 2, 1]
    assert {h.rerank for h in hits} == {"features"}
    path.unlink()  # derived: without it, the built-in default again
    assert search(store, settings)[:2] == [1, 2]


def test_features_see_identifiers_phrases_and_title_cover(store: Store) -> None:
    cands = Candidates(fused=[(2, 0.56), (1, 0.48)], text=[(1, 9.0)], vector=[(2, 0.7), (1, 0.35)])
    ids, rows = rerank_features.compute(store.conn, QUERY, cands)
    assert ids == [2, 1]
    by = [dict(zip(FEATURES, row, strict=True)) for row in rows]
    assert by[1]["identifier"] == 1.0
    assert by[0]["identifier"] == 0.0
    assert by[1]["title_cover"] == 1.0  # bump(ed), cypress, TimelineScheduler and its parts
    assert by[1]["phrase"] > 0
    assert by[0]["phrase"] == 0.0
    assert by[1]["both"] == 1.0
    assert by[0]["both"] == 0.0
    assert by[0]["fused"] == 1.0
    assert by[0]["fts"] == 0.0
    # An id deleted since it was indexed keeps its rank features and is not lost.
    ids, rows = rerank_features.compute(store.conn, QUERY, Candidates([(99, 1.0), (1, 0.5)]))
    assert ids == [99, 1]
    assert len(rows) == 2


def test_rerank_settings_are_checked(tmp_path: Path) -> None:
    # The learned stage is the default (held out by set never below its better single part).
    defaults = load_settings(tmp_path)
    assert (defaults.search_rerank, defaults.search_rerank_method) == (True, "learned")
    with pytest.raises(ValidationError) as err:
        load_settings(tmp_path, search_rerank_depth=1)
    assert "search_rerank_depth" in str(err.value)
