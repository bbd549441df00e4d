"""The pieces ``bench/relevance_session_keep.py`` builds its diagnosis and verdict on.

The bench says why the learned stage drops an evidence session from the first page and
whether a rule chosen by cross-validation keeps it. That is only as good as these: the rule
``kept`` must put every session of the fused head on the page and change nothing else; the
diagnosis must report the places, the lifted and crowding turns and the cap as they were;
the point must be chosen by the acceptance rule's penalty (session hit@10 included), not by
the balanced mean alone; and the verdict must name a breach the rule leaves in place.
"""

from __future__ import annotations

from bench import relevance_ltr
from bench import relevance_session_keep as keep
from workbench.recall.rerank_learned import FEATURES

SESSION = dict.fromkeys(range(1, 13), "x") | {10: "y"}


def test_kept_gives_a_fused_page_session_the_last_place_and_changes_nothing_else() -> None:
    fused = list(range(1, 13))
    # The stage lifted 11 and 12 (session x, already on the page) over 10, y's only turn.
    order = [11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    got = keep.kept(order, fused, SESSION, 10)
    assert got[:10] == [11, 12, 1, 2, 3, 4, 5, 6, 7, 10]
    assert got[10:] == [8, 9]
    # y is not among the fused top 7: nothing to keep, the order stands.
    assert keep.kept(order, fused, SESSION, 7) == order
    assert keep.kept(order, fused, SESSION, None) == order
    # y already on the page: nothing moves.
    assert keep.kept([10, *order[:-1]], fused, SESSION, 10) == [10, *order[:-1]]


def _item(
    gold: int, fts: list[int], scores: dict[int, float], cls: str = "c"
) -> relevance_ltr.Item:
    fused = list(range(1, 13))
    rows = [[scores.get(i, 1.0 - i / 100)] + [0.0] * (len(FEATURES) - 1) for i in fused]
    return relevance_ltr.Item("s", cls, frozenset({gold}), fused, fts, [], {}, {30: (fused, rows)})


def _model(demotion: int = 5) -> keep.Model:
    return keep.Model(30, (1.0,) + (0.0,) * (len(FEATURES) - 1), demotion, None)


LIFTED = {11: 2.0, 12: 1.9}  # 11 and 12 scored over the whole fused head


def test_the_diagnosis_reports_places_lifted_and_crowding_turns_and_the_cap() -> None:
    it = _item(10, [10], LIFTED)
    today = keep.stage_order(it, _model(), SESSION, 5, None)
    assert today[:10] == [11, 12, 1, 2, 3, 4, 5, 6, 7, 8]
    [lost] = keep.diagnose([it], [_model()], [today], {"s": SESSION})
    assert lost["fused_place"] == 10
    assert lost["stage_place"] == 12
    assert lost["lifted"] == 2
    assert lost["crowding"] == 2
    assert lost["cap_allowed"] is True
    assert lost["pinned"] is False
    assert lost["fused_page"] is True
    assert lost["fts_page"] is True
    # With the page kept for y, nothing is lost.
    kept = keep.stage_order(it, _model(), SESSION, 5, 10)
    assert keep.diagnose([it], [_model()], [kept], {"s": SESSION}) == []


def test_the_point_is_chosen_by_the_rules_penalty_session_hit_included() -> None:
    # The evidence session y: full text has it on the page, today's stage not, keep 10 does.
    lost = _item(10, [10], LIFTED)
    got = keep.choose_point([lost], {0: _model()}, {"s": SESSION})
    assert got == (5, 10)
    # The evidence is turn 8 of x: keeping y's place pushes it off the page (R@10 1 -> 0),
    # beyond the tolerance against today's stage, so today's point stays.
    costly = _item(8, [], LIFTED)
    assert keep.choose_point([costly], {0: _model()}, {"s": SESSION}) == (5, None)


def _figures(**over: float) -> dict[str, float]:
    base = {"r5": 0.5, "r10": 0.6, "mrr": 0.5, "hit10": 0.7, "sess_hit10": 0.9, "balanced": 0.5}
    return base | over


def test_the_verdict_names_a_kept_breach_a_new_one_and_a_lower_balanced_mean() -> None:
    rows = {
        "s": {
            "fts": _figures(sess_hit10=0.92),
            "vector": _figures(r5=0.4),
            "d30": _figures(),
            "same": _figures(),
            "worse": _figures(r10=0.59, sess_hit10=0.95, balanced=0.498),
            "fixed": _figures(sess_hit10=0.93, balanced=0.4995),
        }
    }
    assert keep.verdict(rows, "same") == ["kept: s sess_hit10 0.900 < part 0.920 (d30 too)"]
    worse = keep.verdict(rows, "worse")
    assert worse == [
        "s r10 0.590 < part 0.600",
        "s r10 0.590 < d30 0.600 - 0.005",
        "mean balanced 0.4980 < d30 0.5000 - 0.001",
    ]
    assert keep.verdict(rows, "fixed") == []


def test_the_final_point_is_the_same_selection_over_every_set_at_once() -> None:
    """The procedure's last step (``--final``): the same choice, on every set together, each
    question read by its held-out model. A set that loses its evidence session to the stage
    and one where keeping costs nothing: the penalty of the first decides (keep 10); with only
    a question that keeping would cost, today's point stays."""
    lost = _item(10, [10], LIFTED)
    other = relevance_ltr.Item("t", "c", frozenset({1}), list(range(1, 13)), [1], [], {}, lost.rows)
    sessions = {"s": SESSION, "t": SESSION}
    assert keep.final_point([lost, other], [_model(), _model()], sessions) == (5, 10)
    costly = _item(8, [], LIFTED)
    assert keep.final_point([costly, other], [_model(), _model()], sessions) == (5, None)
