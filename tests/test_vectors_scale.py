"""The vector index at scale: quantised kinds with exact rescoring, project filters from the
index's own slot → project array, and removals that never rebuild.

Real FAISS and real SQLite (the embeddings cache is the exact source for rescoring);
clustered vectors, because approximate recall on random ones means nothing (ENVIRONMENT.md).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import clustered_vectors
from workbench.recall import vectors
from workbench.recall.vectors import KINDS, VectorIndex
from workbench.store.database import Store

QUANTISED = ["fp16", "hnsw_fp16", "sq8"]


clustered = partial(clustered_vectors, clusters=40, spread=0.6)


def queries_near(matrix: np.ndarray, count: int, seed: int = 9) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picked = matrix[rng.integers(0, len(matrix), count)]
    noisy = picked + 0.3 * rng.normal(size=picked.shape) / np.sqrt(matrix.shape[1])
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def projects_for(n: int) -> list[str]:
    """One big project (~70%), a middle one, and a small one of 50 rows, interleaved."""
    names = ["big"] * n
    for i in range(0, n, 5):
        names[i] = "middle"
    for i in range(3, n, n // 50):
        names[i] = "small"
    return names


def build(kind: str, matrix: np.ndarray, ids: list[int], projects: list[str] | None = None) -> Any:
    index = VectorIndex("test-model", matrix.shape[1], kind)  # type: ignore[arg-type]
    index.add(ids, [f"h{i}" for i in ids], matrix, projects=projects)
    return index


@pytest.fixture
def cache(tmp_path: Path) -> Any:
    """A real embeddings cache holding the fp32 vectors of ``clustered(6000)``."""
    matrix = clustered(6000)
    ids = list(range(1, 6001))
    store = Store(tmp_path / "w.db")
    vectors.store_vectors(store.conn, "test-model", {f"h{i}": matrix[n] for n, i in enumerate(ids)})

    def exact(hashes: list[str]) -> dict[str, Any]:
        return vectors.cached_vectors(store.conn, "test-model", hashes)

    yield matrix, ids, exact
    store.close()


def brute(matrix: np.ndarray, ids: list[int], query: np.ndarray, k: int) -> list[tuple[int, float]]:
    scores = matrix @ query
    order = sorted(range(len(ids)), key=lambda n: (-scores[n], ids[n]))[:k]
    return [(ids[n], float(scores[n])) for n in order]


# ----- quantised kinds ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", QUANTISED)
def test_compact_kinds_find_the_exact_top_10_with_near_exact_scores(kind: str, cache: Any) -> None:
    """fp16 codes are used as they are; sq8's top candidates are rescored from the cache."""
    matrix, ids, exact = cache
    index = build(kind, matrix, ids)
    hits = 0
    for q in queries_near(matrix, 50):
        got = index.search(q, 10, exact=exact)
        expected = brute(matrix, ids, q, 10)
        hits += len({i for i, _ in got} & {i for i, _ in expected})
        truth = dict(zip(ids, matrix @ q, strict=True))
        for i, score in got:  # sq8: the exact cosine, not the 8-bit codes' estimate
            assert score == pytest.approx(float(truth[i]), abs=1e-5 if kind == "sq8" else 2e-3)
    assert hits / 500 >= 0.97, hits


def test_sq8_without_the_exact_source_ranks_by_its_codes(cache: Any) -> None:
    matrix, ids, exact = cache
    index = build("sq8", matrix, ids)
    q = queries_near(matrix, 1)[0]
    coarse = index.search(q, 10)
    rescored = index.search(q, 10, exact=exact)
    truth = dict(zip(ids, matrix @ q, strict=True))
    assert max(abs(s - truth[i]) for i, s in rescored) < 1e-5
    assert max(abs(s - truth[i]) for i, s in coarse) > 1e-5  # codes alone are approximate


@pytest.mark.parametrize(
    ("kind", "fp32", "share"),
    [("fp16", "flat", 0.55), ("hnsw_fp16", "hnsw", 0.65), ("sq8", "flat", 0.3)],
)
def test_compact_kinds_take_a_fraction_of_fp32_memory(kind: str, fp32: str, share: float) -> None:
    matrix = clustered(2000, dim=384)
    ids = list(range(1, 2001))
    assert build(kind, matrix, ids).memory_bytes() < share * build(fp32, matrix, ids).memory_bytes()


def test_an_unknown_kind_says_which_exist() -> None:
    with pytest.raises(ValueError, match="hnsw_fp16, sq8"):
        VectorIndex("m", 8, "ivf")  # type: ignore[arg-type]


# ----- project filters ------------------------------------------------------------------------
@pytest.mark.parametrize("project", ["small", "middle", "big"])  # 50, 1200, ~4100+ rows
def test_a_project_filter_gives_exactly_the_old_id_list_results(project: str) -> None:
    matrix = clustered(6000)
    ids = list(range(1, 6001))
    names = projects_for(6000)
    index = build("flat", matrix, ids, names)
    members = [i for i, p in zip(ids, names, strict=True) if p == project]
    for q in queries_near(matrix, 30):
        new = index.search(q, 20, projects=[project])
        old = index.search(q, 20, members)  # the old path: the project's ids, collected
        assert new == old
        expected = brute(matrix[[i - 1 for i in members]], members, q, 20)
        assert [i for i, _ in new] == [i for i, _ in expected]
        assert [s for _, s in new] == pytest.approx([s for _, s in expected], abs=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_a_project_filter_never_leaks_another_projects_ids(kind: str, cache: Any) -> None:
    matrix, ids, exact = cache
    names = projects_for(6000)
    index = build(kind, matrix, ids, names)
    of = dict(zip(ids, names, strict=True))
    for project in ("small", "middle", "big"):
        for q in queries_near(matrix, 10):
            got = index.search(q, 50, projects=[project], exact=exact)
            assert got
            assert {of[i] for i, _ in got} == {project}
    both = index.search(matrix[3], 100, projects=["small", "middle"], exact=exact)
    assert {of[i] for i, _ in both} == {"small", "middle"}
    assert index.search(matrix[3], 10, projects=["nobody"]) == []


def test_the_cached_project_selector_follows_adds_and_removes() -> None:
    matrix = clustered(6000)
    ids = list(range(1, 6001))
    index = build("flat", matrix, ids, projects_for(6000))
    target = matrix[4]  # row 5 is in "big"
    assert index.search(target, 1, projects=["big"])[0][0] == 5
    index.remove([5])
    assert 5 not in [i for i, _ in index.search(target, 50, projects=["big"])]
    index.add([7001], ["h7001"], target[None, :], projects=["small"])
    assert index.search(target, 1, projects=["small"])[0][0] == 7001
    assert 7001 not in [i for i, _ in index.search(target, 50, projects=["big"])]
    index.add([7001], ["h7001b"], target[None, :], projects=["big"])  # moved: a new slot
    assert index.search(target, 1, projects=["big"])[0][0] == 7001
    assert 7001 not in [i for i, _ in index.search(target, 50, projects=["small"])]


# ----- removals -------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_removing_never_rebuilds_and_a_returning_id_gets_a_new_slot(kind: str) -> None:
    matrix = clustered(3000)
    ids = list(range(1, 3001))
    index = build(kind, matrix, ids)
    faiss_index = index._index
    gone = ids[::10]
    index.remove(gone)
    assert index._index is faiss_index  # the same graph / codes: nothing was rebuilt
    assert (len(index), index.dead) == (2700, 300)
    for q in queries_near(matrix, 20):
        assert not {i for i, _ in index.search(q, 50)} & set(gone)
    index.add([11], ["h11b"], matrix[101:102])  # id 11 comes back with id 102's vector
    assert index._index is faiss_index
    assert {i for i, _ in index.search(matrix[101], 2)} == {11, 102}
    assert index.hashes()[11] == "h11b"


def test_compaction_runs_once_dead_slots_outnumber_live_ones() -> None:
    matrix = clustered(3000)
    ids = list(range(1, 3001))
    index = build("hnsw", matrix, ids)
    index.remove(ids[:1400])
    before = index._index
    index.add([9001], ["h9001"], matrix[0:1])
    assert index._index is before  # 1400 dead < 1601 live: not yet
    index.remove(ids[1400:1700])
    index.add([9002], ["h9002"], matrix[1:2])  # 1700 dead > 1302 live: compact
    assert index._index is not before
    assert index.dead == 0
    assert len(index) == 1302
    assert index.search(matrix[2500], 1)[0][0] == 2501
    assert index.search(matrix[0], 1)[0][0] == 9001


# ----- persistence ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_save_and_load_keep_dead_slots_and_projects(tmp_path: Path, kind: str, cache: Any) -> None:
    matrix, ids, exact = cache
    index = build(kind, matrix, ids, projects_for(6000))
    index.remove([4, 5, 6])
    index.save(tmp_path)
    loaded, how = VectorIndex.load(tmp_path, "test-model", 64, kind)  # type: ignore[arg-type]
    assert loaded is not None, how
    assert (len(loaded), loaded.dead, loaded.hashes()) == (5997, 3, index.hashes())
    for q in queries_near(matrix, 10):
        assert loaded.search(q, 10, exact=exact) == index.search(q, 10, exact=exact)
        assert loaded.search(q, 10, projects=["small"]) == index.search(q, 10, projects=["small"])


def test_an_old_format_index_loads_as_rebuild_from_the_cache(tmp_path: Path) -> None:
    build("flat", clustered(100), list(range(1, 101))).save(tmp_path)
    meta = vectors.paths(tmp_path, "test-model", "flat")["meta"]
    doc = json.loads(meta.read_text(encoding="utf-8"))
    meta.write_text(json.dumps({**doc, "format": 1}), encoding="utf-8")
    index, why = VectorIndex.load(tmp_path, "test-model", 64, "flat")
    assert index is None
    assert "format 1" in why
    assert "rebuilt from the embeddings cache" in why


def test_load_refuses_slot_arrays_that_disagree_with_the_index(tmp_path: Path) -> None:
    build("flat", clustered(100), list(range(1, 101))).save(tmp_path)
    where = vectors.paths(tmp_path, "test-model", "flat")
    doc = json.loads(where["ids"].read_text(encoding="utf-8"))
    where["ids"].write_text(json.dumps({**doc, "slots": doc["slots"][:-1]}), encoding="utf-8")
    index, why = VectorIndex.load(tmp_path, "test-model", 64, "flat")
    assert index is None
    assert "incomplete" in why


# ----- graph kinds: where the graph is walked (issue 21) ---------------------------------------
def graph_store(n: int = 18_000) -> tuple[np.ndarray, list[int], list[str]]:
    """Many tight clusters (near-duplicates: hard for a graph, like a real history's repeated
    notes), and a project holding every fourth vector: 4,500 slots, more than ``SUBSET_EXACT``
    (so FAISS searches it) and a quarter of the index (selective)."""
    matrix = clustered_vectors(n, 64, clusters=2000, spread=0.3)
    ids = list(range(1, n + 1))
    return matrix, ids, ["quarter" if i % 4 == 0 else "rest" for i in ids]


def build_graph(matrix: np.ndarray, ids: list[int], projects: list[str], **graph: int) -> Any:
    index = VectorIndex("test-model", matrix.shape[1], "hnsw_fp16", **graph)
    index.add(ids, [f"h{i}" for i in ids], matrix, projects=projects)
    return index


def test_a_selective_project_filter_on_a_graph_index_gives_the_exact_list() -> None:
    # A graph walked under a filter that keeps a quarter of its nodes loses neighbours (issue
    # 21); such a search scans the graph's stored codes instead, so it is the exact fp16 list.
    matrix, ids, projects = graph_store()
    graph = build_graph(matrix, ids, projects)
    assert sum(p == "quarter" for p in projects) > vectors.SUBSET_EXACT
    exact = build("fp16", matrix, ids, projects)
    for q in queries_near(matrix, 40):
        assert graph.search(q, 50, projects=["quarter"]) == exact.search(
            q, 50, projects=["quarter"]
        )


def test_a_graph_index_walks_its_graph_only_from_graph_from_vectors() -> None:
    matrix, ids, projects = graph_store()
    exact = build("fp16", matrix, ids, projects)
    below = build_graph(matrix, ids, projects, graph_from=len(ids) + 1, graph_ef=16)
    walked = build_graph(matrix, ids, projects, graph_from=len(ids), graph_ef=16)
    qs = queries_near(matrix, 40)
    assert all(below.search(q, 50) == exact.search(q, 50) for q in qs)
    # efSearch 16 for a list of 50 is too narrow a walk to find every one of them: the graph
    # answers (approximately) once the index holds graph_from vectors
    found = [
        len({i for i, _ in walked.search(q, 50)} & {i for i, _ in exact.search(q, 50)}) for q in qs
    ]
    assert sum(found) < 50 * len(qs)
    # a broad filter (three quarters) walks it too; the cosines it gives are the exact ones
    got = walked.search(qs[0], 50, projects=["rest"])
    truth = dict(exact.search(qs[0], len(ids), projects=["rest"]))
    assert {i for i, _ in got} <= set(truth)
    assert [s for _, s in got] == pytest.approx([truth[i] for i, _ in got], abs=1e-6)
