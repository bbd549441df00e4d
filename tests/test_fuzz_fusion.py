"""Fuzz: i21-fusion's calibration inputs (``search_coverage_power``, ``search_neighbour_lift``).

For any full-text and vector lists, any coverage in [0, 1], any power the settings allow and
either lift: the fused and smoothed list holds every candidate exactly once (fusion never
drops what a ranker found), every score is a finite number, and when
``search.first_is_settled`` says the first hit cannot move, ``smooth`` indeed keeps it first
(the timeline's anchor skips the neighbours on that promise).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.recall import fusion
from workbench.recall.fusion import FusionParams
from workbench.recall.search import first_is_settled

pytestmark = pytest.mark.slow

ids = st.integers(min_value=1, max_value=40)
bm25 = st.floats(min_value=0.0, max_value=50.0, allow_nan=False)
cosine = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
share = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def best_first(pairs: list[tuple[int, float]]) -> list[tuple[int, float]]:
    unique = dict(pairs)
    return sorted(unique.items(), key=lambda pair: -pair[1])


@settings(max_examples=budget(400), deadline=None)
@given(
    st.lists(st.tuples(ids, bm25), max_size=15).map(best_first),
    st.lists(st.tuples(ids, cosine), max_size=15).map(best_first),
    st.dictionaries(ids, share, max_size=20),
    st.floats(min_value=0.0, max_value=4.0, allow_nan=False),
    st.sampled_from(["toward", "add"]),
    share,
    st.dictionaries(ids, st.lists(ids, max_size=2).map(tuple), max_size=20),
)
def test_any_lists_fuse_and_smooth_without_losing_a_hit(
    text: list[tuple[int, float]],
    vector: list[tuple[int, float]],
    coverage: dict[int, float],
    power: float,
    lift: fusion.Lift,
    weight: float,
    beside: dict[int, tuple[int, ...]],
) -> None:
    params = FusionParams(coverage_power=power, neighbour_lift=lift, neighbour_weight=weight)
    fused = fusion.fuse(text, vector, coverage, params)
    found = {i for i, _ in text} | {i for i, _ in vector}
    assert sorted(i for i, _ in fused) == sorted(found)
    assert all(math.isfinite(s) for _, s in fused)
    smoothed = fusion.smooth(fused, beside, weight, lift=lift)
    assert len({i for i, _ in smoothed}) == len(smoothed)
    assert found <= {i for i, _ in smoothed}
    assert all(math.isfinite(s) for _, s in smoothed)
    if fused and first_is_settled(fused, weight):
        assert smoothed[0][0] == fused[0][0]
