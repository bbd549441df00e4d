"""The benches' two readings of recall (``bench/relevance_readings.py``): share and hit.

Issue 21's held-out figures are the any-of-the-evidence reading (hit@k), the project's
benches printed only the share of the evidence (R@k); a multi-hop question with one of its
two evidence turns found must read 0.5 in one and 1 in the other, and its sessions likewise.
"""

from __future__ import annotations

import pytest

from bench import relevance_readings as readings


def test_a_question_with_one_of_two_evidence_turns_found_reads_half_a_share_and_a_whole_hit() -> (
    None
):
    session_of = {1: "a", 2: "b", 10: "a", 11: "c"}
    got = readings.read([10, 1, 11], [1, 2], session_of)
    assert (got.r5, got.r10, got.mrr) == (0.5, 0.5, 0.5)
    assert (got.hit5, got.hit10) == (1.0, 1.0)
    assert (got.sess_r10, got.sess_hit10) == (0.5, 1.0)


def test_evidence_past_the_fifth_place_is_a_hit_at_10_but_not_at_5() -> None:
    ranked = [20, 21, 22, 23, 24, 7]
    got = readings.read(ranked, [7, 8])
    assert (got.hit5, got.hit10, got.r10, got.mrr) == (0.0, 1.0, 0.5, 1 / 6)
    assert got.sess_r10 is None
    assert got.sess_hit10 is None


def test_a_session_found_by_another_turn_of_it_counts_for_the_session_readings() -> None:
    got = readings.read([5, 6], [9], {5: "s1", 9: "s1", 6: "s2"})
    assert (got.r10, got.hit10) == (0.0, 0.0)
    assert (got.sess_r10, got.sess_hit10) == (1.0, 1.0)


def test_the_mean_skips_questions_without_a_session_reading() -> None:
    a = readings.read([1], [1], {1: "x"})
    b = readings.read([3], [2])
    m = readings.mean([a, b])
    assert m["hit10"] == 0.5
    assert m["sess_hit10"] == 1.0
    assert readings.mean([])["r5"] is None


def test_a_question_without_evidence_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="fix the set"):
        readings.read([1, 2], [])
