"""Fuzz: a graph index (``hnsw_fp16``) under any walk settings, filter and list length.

Issue 21: a graph kind walks its graph only from ``graph_from`` live vectors and for searches
that keep at least ``GRAPH_MIN_SHARE`` of them; every other search scans the graph's stored
fp16 codes exactly. For any ``graph_from``, ``graph_ef``, project filter, ``k`` and query:

- no hit is outside the filter, the list is best first and never longer than ``k``;
- every cosine is the one the exact fp16 index gives that id (the walk may miss ids, never
  misscore one);
- a search that does not walk (too few vectors, or too selective a filter) is the exact fp16
  list, hits and order.

Real FAISS; one index pair built per module (the walk settings are changed per example).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import clustered_vectors
from tests.fuzz_harness import budget
from workbench.recall.vectors import GRAPH_MIN_SHARE, VectorIndex

pytestmark = pytest.mark.slow

N = 6000  # more than SUBSET_EXACT, so a broad filter reaches FAISS
NAMES = ["a", "b", "c", "d"]  # ~40%, 30%, 20%, 10% of the vectors


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any, np.ndarray, list[str]]:
    matrix = clustered_vectors(N, 24, clusters=300, spread=0.3, seed=4)
    rng = np.random.default_rng(4)
    projects = [str(p) for p in rng.choice(NAMES, size=N, p=[0.4, 0.3, 0.2, 0.1])]
    ids = list(range(1, N + 1))
    built = []
    for kind in ("hnsw_fp16", "fp16"):
        index = VectorIndex("fuzz", 24, kind)  # type: ignore[arg-type]
        index.add(ids, [f"h{i}" for i in ids], matrix, projects=projects)
        built.append(index)
    return built[0], built[1], matrix, projects


@settings(max_examples=budget(200), deadline=None)
@given(
    graph_from=st.one_of(st.just(0), st.integers(0, N + 10)),
    graph_ef=st.integers(1, 600),
    chosen=st.one_of(st.none(), st.sets(st.sampled_from(NAMES), min_size=1)),
    k=st.integers(1, 80),
    row=st.integers(0, N - 1),
    noise=st.floats(0.0, 2.0),
)
def test_a_graph_index_never_leaks_never_misscores_and_is_exact_when_it_does_not_walk(
    pair: tuple[Any, Any, np.ndarray, list[str]],
    graph_from: int,
    graph_ef: int,
    chosen: set[str] | None,
    k: int,
    row: int,
    noise: float,
) -> None:
    graph, exact, matrix, projects = pair
    graph.graph_from, graph.graph_ef = graph_from, max(graph_ef, 1)
    rng = np.random.default_rng(row)
    q = matrix[row] + noise * rng.normal(size=matrix.shape[1]) / np.sqrt(matrix.shape[1])
    q = (q / np.linalg.norm(q)).astype(np.float32)
    names = sorted(chosen) if chosen is not None else None
    got = graph.search(q, k, projects=names)
    truth = exact.search(q, N, projects=names)
    cosine = dict(truth)
    assert len(got) <= k
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    assert {i for i, _ in got} <= set(cosine)  # never outside the filter
    for i, s in got:
        assert s == pytest.approx(cosine[i], abs=1e-5)
    kept = len(truth)
    walks = N >= graph_from and kept >= GRAPH_MIN_SHARE * N
    if not walks:
        assert got == truth[:k]
