"""The candidate lists and session features ``bench/relevance_stage_lists.py`` cross-validates,
and ``bench/relevance_ltr.reorder`` over a list that is not the fused head.

The bench's verdict (nothing shipped) is only as good as these: ``div`` must add from fused
places 31-50 exactly one turn of each session the top 30 lacks, the session features must
read the candidates' sessions, and the reordered list must keep every fused id once.
"""

from __future__ import annotations

from bench import relevance_ltr, relevance_stage_lists
from workbench.recall.rerank_features import ObsText
from workbench.recall.rerank_learned import FEATURES


def test_div_adds_one_turn_of_each_session_the_top_30_lacks_from_places_31_to_50() -> None:
    fused = list(range(1, 61))
    session = dict.fromkeys(range(1, 31), "old")  # the top 30: one session
    session |= {31: "old", 32: "new", 33: "new", 40: "other", 55: "late"}
    lists = relevance_stage_lists.candidate_lists(fused, session)
    assert lists["d30"] == fused[:30]
    assert lists["d50"] == fused[:50]
    # 31 is of a session already there, 33 repeats 32's, 55 is past place 50; ids with no
    # session known (34-39, 41-50) are never added.
    assert lists["div"] == [*fused[:30], 32, 40]


def test_session_features_read_the_candidates_of_the_same_session() -> None:
    texts: dict[int, ObsText] = {
        1: {"title": "", "body": "the red kite", "type": "", "epoch": 0},
        2: {"title": "", "body": "flew over Leeds", "type": "", "epoch": 0},
        5: {"title": "", "body": "a kite in Leeds", "type": "", "epoch": 0},
    }
    session = {1: "a", 2: "a", 5: "b"}
    fused_of = {1: 0.5, 2: 1.0, 5: 0.8}
    rows = relevance_stage_lists.extras([2, 5, 1], texts, session, "red kite Leeds", fused_of)
    best, first, cover, near, said = zip(*rows, strict=True)
    assert best == (1.0, 0.8, 1.0)  # 1's session holds the list's best (2)
    assert first == (1.0, 1.0, 0.0)  # 1 comes after 2, its session's best
    assert cover == (1.0, 2 / 3, 1.0)  # 1 and 2 together hold red, kite and Leeds
    assert near == (1.0, 2 / 3, 1.0)  # 1 and 2 are neighbouring turns
    assert said == (0.0, 0.0, 0.0)  # not a question about a time


def test_time_said_marks_the_turns_that_name_a_time_when_the_question_asks_one() -> None:
    def text(words: str) -> ObsText:
        return {"title": words, "body": "", "type": "", "epoch": 0}

    texts = {
        1: text("Caroline: I went to the support group yesterday"),
        2: text("Melanie: the support group was lovely"),
        3: text("Caroline: we moved in May 2022"),
        4: text("Melanie: you may go to the group"),  # "may", the verb: no time
        5: {"title": "Caroline: notes", "body": "on the 5th, before lunch", "type": "", "epoch": 0},
    }
    session = dict.fromkeys(texts, "a")
    fused_of = dict.fromkeys(texts, 1.0)
    ids = list(texts)
    asked = relevance_stage_lists.extras(ids, texts, session, "When did she go?", fused_of)
    assert [row[-1] for row in asked] == [1.0, 0.0, 1.0, 0.0, 1.0]
    other = relevance_stage_lists.extras(ids, texts, session, "Who went to the group?", fused_of)
    assert [row[-1] for row in other] == [0.0] * 5


def test_reorder_keeps_every_fused_id_once_when_the_stage_reads_more_than_the_head() -> None:
    fused = list(range(1, 41))
    ids = [*fused[:30], 35]  # a div list: the head and one turn from place 35
    rows = [[0.0] * len(FEATURES) for _ in ids]
    rows[-1][FEATURES.index("fused")] = 1.0  # the model lifts 35 to the top
    item = relevance_ltr.Item("s", "c", frozenset({35}), fused, [], [], {}, {30: (ids, rows)})
    weights = [1.0 if f == "fused" else 0.0 for f in FEATURES]
    got = relevance_ltr.reorder(item, 30, weights)
    assert got[0] == 35
    assert sorted(got) == fused
    assert got[31:] == [i for i in fused[30:] if i != 35]
