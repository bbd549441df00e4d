"""Fuzz: an ``fp16`` index with a prefilter under any threshold, filter, list length, query and
removals (``recall/vector_prefilter.py``).

For any ``prefilter_from``, project filter, ``k``, query and set of removed ids:

- no hit is removed or outside the filter, the list is best first and never longer than ``k``;
- every score is the one the full scan gives that id, bit for bit (the prefilter may miss an
  id, never misscore one);
- when the prefilter is not built (fewer live vectors than the setting or ``MIN_VECTORS``)
  the list is the full scan's (where a cut at ``k`` falls inside a group of tied scores, the
  scan keeps the group's earliest slots, not its lowest ids: the same scores, ids of the group);
- the codes always cover every slot once built (``prefiltered``), whatever was removed;
- the index holds groups of identical vectors (memories with the same text share one), so
  scores tie, also where a list is cut;
- a removed vector leaves no copy: its dead slots decode to zeros in the index, and hold the
  neutral code in the prefilter's (embeddings can be inverted to text).

Real FAISS; one pair of indexes per module, a removal applied to both and undone by re-adding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import clustered_vectors
from tests.fuzz_harness import budget
from tests.test_vectors_forget import prefilter_codes
from workbench.recall.vector_prefilter import MIN_VECTORS
from workbench.recall.vectors import VectorIndex

pytestmark = pytest.mark.slow

N = 5000
DIM = 16
NAMES = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def pair() -> tuple[VectorIndex, VectorIndex, Any, list[str]]:
    matrix = clustered_vectors(N, DIM, clusters=120, spread=0.3, seed=6)
    matrix[N - 200 :] = np.repeat(matrix[:20], 10, axis=0)  # 20 texts held 11 times each
    rng = np.random.default_rng(6)
    projects = [str(p) for p in rng.choice(NAMES, size=N, p=[0.5, 0.3, 0.15, 0.05])]
    ids = list(range(1, N + 1))
    fast = VectorIndex("fuzz", DIM, "fp16", prefilter_from=0)
    exact = VectorIndex("fuzz", DIM, "fp16")
    for index in (fast, exact):
        index.add(ids, [f"h{i}" for i in ids], matrix, projects=projects)
    fast.prepare_prefilter()
    return fast, exact, matrix, projects


@settings(max_examples=budget(150), deadline=None)
@given(
    prefilter_from=st.integers(0, N + 10),
    chosen=st.one_of(st.none(), st.sets(st.sampled_from(NAMES), min_size=1)),
    k=st.integers(1, 120),
    row=st.integers(0, N - 1),
    noise=st.floats(0.0, 2.0),
    removed=st.sets(st.integers(1, N), max_size=300),
)
def test_a_prefiltered_index_never_leaks_never_misscores(
    pair: tuple[VectorIndex, VectorIndex, Any, list[str]],
    prefilter_from: int,
    chosen: set[str] | None,
    k: int,
    row: int,
    noise: float,
    removed: set[int],
) -> None:
    fast, exact, matrix, projects = pair
    fast.prefilter_from = prefilter_from
    for index in (fast, exact):
        index.remove(removed)
    try:
        fast.prepare_prefilter()
        built = len(fast) >= max(prefilter_from, MIN_VECTORS)
        assert fast.prefiltered == built
        rng = np.random.default_rng(row)
        q = matrix[row] + noise * rng.normal(size=DIM) / np.sqrt(DIM)
        q = (q / np.linalg.norm(q)).astype(np.float32)
        names = sorted(chosen) if chosen is not None else None
        got = fast.search(q, k, projects=names)
        truth = exact.search(q, N, projects=names)
        cosine = dict(truth)
        assert len(got) == min(k, len(truth))
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        assert {i for i, _ in got} <= set(cosine)  # never removed, never outside the filter
        assert all(s == cosine[i] for i, s in got)
        if not built:
            assert cut_of(got) == cut_of(truth[:k])  # ties at the cut: the earliest slots
        # A removed vector leaves no copy: its slots decode to zeros, and its prefilter codes
        # are the neutral code (the codebooks' shortest centroids), whatever it was.
        dead = np.flatnonzero(~fast._live)
        assert not fast._index.reconstruct_batch(dead.astype(np.int64)).any()
        if fast._prefilter is not None:
            neutral = fast._prefilter.neutral_code()
            assert (prefilter_codes(fast, dead) == neutral).all()
    finally:
        back = sorted(removed)
        for index in (fast, exact):
            index.add(
                back,
                [f"h{i}" for i in back],
                matrix[[i - 1 for i in back]],
                projects=[projects[i - 1] for i in back],
            )


def cut_of(found: list[tuple[int, float]]) -> tuple[list[tuple[int, float]], list[float]]:
    """A list as a cut at its length may differ and still be right: its hits above the last
    score, and its scores (the last score's hits may be any of that tied group)."""
    last = found[-1][1] if found else None
    return [(i, s) for i, s in found if s != last], [s for _, s in found]
