"""i21-context: the session spread, a session's later hits giving way to other sessions'.

The report (issue 21): session R@10 is 0.874 on long conversations (goal 0.96): a multi-hop
question's evidence sits in two sessions, and one session that repeats the question's words
fills the page, so the other session's evidence falls off it. ``search_spread_weight``
(``workbench/recall/session_spread.py``) demotes a session's hits past its first
``search_spread_free``. These tests run ``SearchEngine`` on a real SQLite store, and the
spread's own rules on plain lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SimilarityRanker, assert_setting_refused, store_of_turns, turn_order
from workbench.models import ObservationDraft
from workbench.recall import session_spread, session_term
from workbench.recall.filters import SearchFilters
from workbench.recall.search import SearchEngine
from workbench.recall.session_spread import SpreadParams
from workbench.recall.session_term import ConversationParams
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

QUESTION = "where did Caroline move after the pride parade"
# Evidence: 1 (the parade, talk-1) and 5 (the move, talk-2). talk-1 crowds the page with
# more parade talk (2, 3, 4), each closer to the question than the move.
TURNS = [
    ("talk-1", "Caroline: the pride parade downtown was amazing."),
    ("talk-1", "Melanie: the pride parade sounds amazing, Caroline!"),
    ("talk-1", "Caroline: after the parade we had dinner near the pride stage."),
    ("talk-1", "Melanie: did Caroline march in the parade after all?"),
    ("talk-2", "Caroline: I finally relocated to Sweden last month."),
    ("talk-3", "Melanie: the kids loved the camping trip."),
]
COSINES = {1: 0.60, 2: 0.58, 3: 0.57, 4: 0.56, 5: 0.50, 6: 0.10}


@pytest.fixture
def talks(tmp_path: Path) -> Iterator[Store]:
    with store_of_turns(tmp_path / "workbench.db", TURNS) as store:
        yield store


def page(
    store: Store,
    root: Path,
    filters: SearchFilters | None = None,
    limit: int = 3,
    **over: object,
) -> list[int]:
    return turn_order(store, root, QUESTION, COSINES, filters, limit, **over)


def test_the_second_sessions_evidence_reaches_the_page(talks: Store, tmp_path: Path) -> None:
    before = page(talks, tmp_path / "off")
    after = page(talks, tmp_path / "on", search_spread_weight=0.5, search_spread_free=1)
    assert 5 not in before  # talk-1 fills the page
    assert 1 in after
    assert 5 in after
    everything_before = page(talks, tmp_path / "off", limit=20)
    everything_after = page(talks, tmp_path / "on", limit=20, search_spread_weight=0.5)
    assert sorted(everything_after) == sorted(everything_before)  # nothing added or dropped
    other = SearchFilters(project="elsewhere")
    assert page(talks, tmp_path / "other", other, search_spread_weight=0.5) == []


def test_free_hits_per_session_keep_their_score() -> None:
    fused = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.5)]
    sessions = {1: "a", 2: "a", 3: "a", 4: "b"}
    out = dict(session_spread.spread(fused, sessions, 0.5, free=2))
    assert out[1] == 1.0
    assert out[2] == 0.9
    assert out[3] == pytest.approx(0.4)  # the third keeps half
    assert out[4] == 0.5
    assert [i for i, _ in session_spread.spread(fused, sessions, 0.5, free=2)] == [1, 2, 4, 3]
    twice = dict(session_spread.spread(fused, sessions, 0.5, free=1))
    assert twice[3] == pytest.approx(0.8 * 0.25)  # the k-th beyond the free ones: (1-w)^k


def test_no_session_no_score_and_weight_zero_leave_a_hit_alone() -> None:
    fused = [(1, 1.0), (2, 0.9), (3, 0.0)]
    sessions = {1: "a", 3: "a"}  # 2 has no session; 3 was kept with no score
    assert dict(session_spread.spread(fused, sessions, 0.9))[3] == 0.0
    assert dict(session_spread.spread(fused, sessions, 0.9))[2] == 0.9
    assert session_spread.spread(fused, {1: "a", 2: "a"}, 0.0) == fused


def test_the_spread_comes_from_the_settings(tmp_path: Path) -> None:
    params = SpreadParams.from_settings(load_settings(tmp_path / "a"))
    assert params == SpreadParams()
    on = load_settings(tmp_path / "b", search_spread_weight=0.3, search_spread_free=2)
    assert SpreadParams.from_settings(on) == SpreadParams(0.3, 2)


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("search_spread_weight", 1.5, "less than or equal to 1"),
        ("search_spread_weight", -0.1, "greater than or equal to 0"),
        ("search_spread_free", 0, "greater than or equal to 1"),
        ("search_spread_free", 11, "less than or equal to 10"),
    ],
)
def test_a_bad_spread_setting_is_refused(
    tmp_path: Path, field: str, value: float, says: str
) -> None:
    assert_setting_refused(tmp_path, field, value, says)


def test_tool_notes_keep_their_order(tmp_path: Path) -> None:
    with store_of_turns(tmp_path / "workbench.db", []) as store:
        with atomic(store.conn):
            for title in ("Pride parade banner export", "Parade route map", "Caroline move"):
                observations.insert(
                    store.conn,
                    ObservationDraft(title=title, narrative="CSV for the parade page"),
                    content_session_id="work-1",
                    project="p",
                )
        ranker = SimilarityRanker({1: 0.6, 2: 0.5, 3: 0.4})
        orders = []
        for weight in (0.0, 0.9):
            settings = load_settings(tmp_path / f"w{weight}", search_spread_weight=weight)
            found = SearchEngine(store, settings, ranker).search(QUESTION, types="observations")
            orders.append([h.id for h in found.observations])
        assert orders[0] == orders[1]


def test_with_the_session_term_one_lookup_of_the_sessions_serves_both(
    talks: Store, tmp_path: Path
) -> None:
    """The session term rescores the hits it is given and adds none, so the spread after it
    needs the sessions of the same ids: a search with both on asks SQLite for them once
    (counted on the store's own connection), and ranks as the two steps do one after the
    other (the second stage off: it would reorder after them)."""
    both = {"search_session_weight": 0.5, "search_spread_weight": 0.5, "search_rerank": False}
    asked: list[str] = []
    talks.conn.set_trace_callback(asked.append)
    try:
        got = page(talks, tmp_path / "both", limit=20, **both)
    finally:
        talks.conn.set_trace_callback(None)
    lookups = [sql for sql in asked if "content_session_id IS NOT NULL" in sql]
    assert len(lookups) == 1, lookups
    # The same order as the two steps applied one after the other by their own functions.
    off = load_settings(tmp_path / "by-hand", search_neighbour_weight=0.0, search_rerank=False)
    engine = SearchEngine(talks, off, SimilarityRanker(COSINES))
    fused = [(h.id, h.score) for h in engine.search(QUESTION, types="observations").observations]
    on = load_settings(tmp_path / "both", search_neighbour_weight=0.0, **both)
    talk, spread = ConversationParams.from_settings(on), SpreadParams.from_settings(on)
    sessions = session_term.sessions_of(talks.conn, [i for i, _ in fused])
    lifted = session_term.lifted(fused, sessions, talk.session_weight, talk.session_top)
    by_hand = session_spread.spread(lifted, sessions, spread.weight, spread.free)
    assert got == [i for i, _ in by_hand]
