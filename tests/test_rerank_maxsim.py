"""The ``maxsim`` second stage (issue 21): late interaction over MiniLM's word pieces.

A real store, the vector ranker at the protocol level (fixed similarities, as in
``test_rerank``), and a real token table built here from the shipped MiniLM's int8 ONNX copy
(only the pieces these texts use, so it takes a second). With the method on, the memory that
holds the query's words comes first although fusion put a vaguer one first; the same ids come
back; hits say ``maxsim``. A missing or altered table gives the fused order and says why in
the search's ``degraded`` and in /api/health's warnings; a failure inside the stage gives the
fused order too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from tests.conftest import Service, SimilarityRanker, base_env, free_port, store_of_titles

# The memories, query and similarities of test_rerank: 1 holds the query's words, 2 is the
# semantically closest and vaguer one that fusion puts first.
from tests.test_rerank import MEMORIES, QUERY, SIMILARITY, VECTOR_LED, token_table
from workbench.recall import rerank_tokens
from workbench.recall.search import SearchEngine
from workbench.settings import load_settings
from workbench.store.database import Store


@pytest.fixture(scope="module")
def table(installed_onnx_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real table from the installed weights, holding the rows of these texts' pieces."""
    return token_table(installed_onnx_model, tmp_path_factory.mktemp("tokens"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with store_of_titles(tmp_path / "workbench.db", MEMORIES) as s:
        yield s


@pytest.fixture
def use_table(table: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORKBENCH_RERANK_TOKENS_DIR", str(table))
    return table


def search(store: Store, settings: object, limit: int = 5, offset: int = 0) -> list[int]:
    engine = SearchEngine(store, settings, SimilarityRanker(SIMILARITY))
    found = engine.search(QUERY, types="observations", limit=limit, offset=offset)
    return [h.id for h in found.observations]


def maxsim_settings(where: Path, **extra: object) -> object:
    return load_settings(
        where, search_rerank=True, search_rerank_method="maxsim", **VECTOR_LED, **extra
    )


def test_the_memory_holding_the_query_words_comes_first(
    store: Store, tmp_path: Path, use_table: Path
) -> None:
    assert search(store, load_settings(tmp_path / "off", search_rerank=False, **VECTOR_LED))[
        :2
    ] == [2, 1]  # fusion
    on = maxsim_settings(tmp_path / "on")
    assert search(store, on)[:2] == [1, 2]
    result = SearchEngine(store, on, SimilarityRanker(SIMILARITY)).search(QUERY, limit=5)
    assert {h.rerank for h in result.observations} == {"maxsim"}
    assert result.degraded is None
    assert result.observations[0].rankers == ["fts", "vector"]  # contract fields unchanged


def test_maxsim_only_reorders_and_pages_see_one_order(
    store: Store, tmp_path: Path, use_table: Path
) -> None:
    off = search(
        store, load_settings(tmp_path / "off", search_rerank=False, **VECTOR_LED), limit=50
    )
    on = maxsim_settings(tmp_path / "on", search_rerank_depth=3)
    ranked = search(store, on, limit=50)
    assert sorted(ranked) == sorted(off)
    assert len(set(ranked)) == len(MEMORIES)
    assert ranked[3:] == off[3:]  # beyond the depth: the fused order
    pages = [search(store, on, limit=2, offset=o) for o in (0, 2, 4)]
    assert [i for page in pages for i in page] == ranked


def test_a_missing_table_gives_the_fused_order_and_says_why(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_RERANK_TOKENS_DIR", str(tmp_path / "never-built"))
    on = maxsim_settings(tmp_path / "on")
    result = SearchEngine(store, on, SimilarityRanker(SIMILARITY)).search(QUERY, limit=5)
    assert [h.id for h in result.observations][:2] == [2, 1]
    assert all(h.rerank is None for h in result.observations)
    assert result.degraded is not None
    assert "workbench rerank build" in result.degraded


def test_an_altered_table_gives_the_fused_order(
    store: Store, tmp_path: Path, table: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    broken = tmp_path / "altered"
    shutil.copytree(table, broken)
    with (broken / rerank_tokens.TABLE_FILE).open("r+b") as handle:
        handle.seek(-8, 2)
        handle.write(b"\xff" * 8)
    monkeypatch.setenv("WORKBENCH_RERANK_TOKENS_DIR", str(broken))
    reason = rerank_tokens.problem()
    assert reason is not None
    assert "does not match its manifest" in reason
    result = SearchEngine(store, maxsim_settings(tmp_path), SimilarityRanker(SIMILARITY)).search(
        QUERY, limit=5
    )
    assert [h.id for h in result.observations][:2] == [2, 1]
    assert result.degraded is not None
    assert "rebuild it" in result.degraded


def test_a_failing_stage_gives_the_fused_order(
    store: Store, tmp_path: Path, use_table: Path
) -> None:
    # A bench-style settings object whose weight is not a number: the stage raises inside.
    broken = SimpleNamespace(
        search_rerank=True,
        search_rerank_method="maxsim",
        search_rerank_depth=50,
        search_rerank_maxsim_fused="heavy",
        data_dir=tmp_path,
        **VECTOR_LED,
    )
    hits = SearchEngine(store, broken, SimilarityRanker(SIMILARITY)).search(QUERY, limit=5)
    assert [h.id for h in hits.observations][:2] == [2, 1]
    assert all(h.rerank is None for h in hits.observations)


def test_maxsim_settings_are_checked(tmp_path: Path) -> None:
    assert load_settings(tmp_path).search_rerank_method == "learned"  # the default stage
    for bad in ({"search_rerank_method": "colbert"}, {"search_rerank_maxsim_fused": 1.5}):
        with pytest.raises(ValidationError) as err:
            load_settings(tmp_path, **bad)
        assert next(iter(bad)) in str(err.value)


def test_health_warns_when_the_table_is_missing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    env = base_env(
        data,
        port,
        WORKBENCH_EMBEDDER="none",
        WORKBENCH_SEARCH_RERANK="true",
        WORKBENCH_SEARCH_RERANK_METHOD="maxsim",
        WORKBENCH_RERANK_TOKENS_DIR=str(tmp_path / "never-built"),
    )
    svc = Service(data_dir=data, port=port, env=env).start()
    try:
        warnings = svc.get("/api/health")[1]["warnings"]
    finally:
        svc.stop()
    assert any("workbench rerank build" in w for w in warnings), warnings


def test_build_without_the_onnx_model_names_the_fix(tmp_path: Path) -> None:
    from tests.conftest import run_workbench

    env = base_env(
        tmp_path,
        free_port(),
        WORKBENCH_ONNX_MODEL_DIR=str(tmp_path / "no-onnx"),
        WORKBENCH_RERANK_TOKENS_DIR=str(tmp_path / "tokens"),
    )
    done = run_workbench(env, "rerank", "build")
    assert done.returncode != 0
    assert "workbench models build" in done.stderr + done.stdout
    assert not (tmp_path / "tokens").exists()


def test_cached_word_pieces_rank_as_cold_ones_and_follow_an_edit(
    store: Store, tmp_path: Path, use_table: Path
) -> None:
    from workbench.recall import rerank_maxsim

    on = maxsim_settings(tmp_path / "on")
    rerank_maxsim.clear_cache()
    engine = SearchEngine(store, on, SimilarityRanker(SIMILARITY))
    cold = [(h.id, h.score) for h in engine.search(QUERY, limit=5).observations]
    warm = [(h.id, h.score) for h in engine.search(QUERY, limit=5).observations]
    assert warm == cold
    assert cold[0][0] == 1
    # The answer's text changes: its old pieces must not be used for its new text.
    store.conn.execute("UPDATE observations SET title = ? WHERE id = 1", ("Renamed a file",))
    store.conn.commit()
    edited = [h.id for h in engine.search(QUERY, limit=5).observations]
    rerank_maxsim.clear_cache()
    assert edited == [h.id for h in engine.search(QUERY, limit=5).observations]
