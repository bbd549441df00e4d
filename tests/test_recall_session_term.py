"""i21-context: the session term, a hit's share of its session's aggregate score.

The report (issue 21): multi-hop questions, whose evidence is spread over several turns of one
session, reach hybrid R@10 0.40 on long conversations and session R@10 0.874: each turn
matches a part of the question and loses to one turn elsewhere that repeats more of its
words. ``search_session_weight`` (``workbench/recall/session_term.py``) lifts the hits of the
session whose best hits, taken together, match best. These tests run ``SearchEngine`` on a
real SQLite store, and the term's own rules on plain lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import assert_setting_refused, store_of_turns, turn_order
from workbench.models import ObservationDraft
from workbench.recall import session_term
from workbench.recall.filters import SearchFilters
from workbench.recall.session_term import ConversationParams
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

QUESTION = "what did Caroline start researching after the support group"
# Evidence: 1 (the group) and 3 (the research), both in talk-1; 4 repeats more of the words.
TURNS = [
    ("talk-1", "Caroline: I went to the support group yesterday, it was powerful."),
    ("talk-1", "Melanie: I'm so glad you went, that takes courage."),
    ("talk-1", "Caroline: Afterwards I started researching adoption agencies."),
    ("talk-2", "Melanie: Caroline, my pottery group made bowls for the support group raffle."),
    ("talk-2", "Caroline: Those bowls are lovely!"),
    ("talk-3", "Melanie: I started researching camping spots for the summer."),
]
COSINES = {4: 0.47, 1: 0.45, 3: 0.45, 6: 0.42, 2: 0.20, 5: 0.15}


@pytest.fixture
def talks(tmp_path: Path) -> Iterator[Store]:
    with store_of_turns(tmp_path / "workbench.db", TURNS) as store:
        yield store


def order(
    store: Store, root: Path, filters: SearchFilters | None = None, **over: object
) -> list[int]:
    return turn_order(store, root, QUESTION, COSINES, filters, **over)


def test_evidence_spread_over_one_session_rises_together(talks: Store, tmp_path: Path) -> None:
    before = order(talks, tmp_path / "off")
    after = order(talks, tmp_path / "on", search_session_weight=0.5, search_session_top=2)
    assert set(before[:2]) != {1, 3}
    assert set(after[:2]) == {1, 3}
    assert sorted(after) == sorted(before)  # reordered, nothing added or dropped
    # Another project's filter: nothing of these talks comes back, lifted or not.
    kept = order(
        talks, tmp_path / "other", SearchFilters(project="elsewhere"), search_session_weight=0.5
    )
    assert kept == []


def test_one_session_keeps_the_fused_order() -> None:
    fused = [(7, 3.0), (5, 2.0), (9, 1.0), (4, 0.0)]
    same = dict.fromkeys([7, 5, 9, 4], "s")
    assert session_term.lifted(fused, same, 0.5, 2) == [
        (7, 3.0 + 1.5),
        (5, 2.0 + 1.5),
        (9, 1.0 + 1.5),
        (4, 0.0),  # kept with no score: gains nothing, stays last
    ]


def test_a_hit_without_a_session_gains_nothing_and_weight_zero_is_the_identity() -> None:
    fused = [(1, 1.0), (2, 0.9), (3, 0.8)]
    sessions = {2: "a", 3: "a"}  # 1 has no session
    lifted = session_term.lifted(fused, sessions, 0.5, 2)
    assert [i for i, _ in lifted] == [2, 3, 1]
    assert dict(lifted)[1] == 1.0
    assert session_term.lifted(fused, sessions, 0.0, 2) == fused


def test_the_term_comes_from_the_settings(tmp_path: Path) -> None:
    params = ConversationParams.from_settings(load_settings(tmp_path / "a"))
    assert (params.session_weight, params.session_top) == (
        session_term.DEFAULT_SESSION_WEIGHT,
        session_term.DEFAULT_SESSION_TOP,
    )
    on = load_settings(tmp_path / "b", search_session_weight=0.3, search_session_top=3)
    assert ConversationParams.from_settings(on).session_weight == 0.3
    assert ConversationParams.from_settings(on).session_top == 3


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("search_session_weight", 1.5, "less than or equal to 1"),
        ("search_session_weight", -0.1, "greater than or equal to 0"),
        ("search_session_top", 0, "greater than or equal to 1"),
        ("search_session_top", 11, "less than or equal to 10"),
    ],
)
def test_a_bad_session_setting_is_refused(
    tmp_path: Path, field: str, value: float, says: str
) -> None:
    assert_setting_refused(tmp_path, field, value, says)


def test_only_conversation_turns_take_part(tmp_path: Path) -> None:
    with store_of_turns(tmp_path / "workbench.db", TURNS[:2]) as store:
        with atomic(store.conn):
            observations.insert(
                store.conn,
                ObservationDraft(title="Refund export", narrative="CSV for finance"),
                content_session_id="talk-1",
                project="p",
            )
        assert session_term.sessions_of(store.conn, [1, 2, 3]) == {
            1: ("talk-1", "p"),
            2: ("talk-1", "p"),
        }


def test_best_only_lifts_a_sessions_top_hits_and_leaves_its_others() -> None:
    fused = [(1, 1.0), (4, 0.9), (2, 0.5), (5, 0.45), (3, 0.4)]
    sessions = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b"}
    every = dict(session_term.lifted(fused, sessions, 0.5, 2))
    best = dict(session_term.lifted(fused, sessions, 0.5, 2, best_only=True))
    assert every[3] > 0.4  # the session's third hit gains its share...
    assert best[3] == 0.4  # ...unless only the two that make the aggregate do
    assert best[1] == every[1]
    assert best[2] == every[2]
