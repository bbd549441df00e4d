"""Fuzz: the days a search query names (workbench/recall/query_dates.py), a new query input.

Any text is a query: ``days_named`` never raises, names only real calendar days, at most
``MAX_DAYS`` of them; a day written in any supported form is found; and a hybrid search with
the date lift and RM3 feedback (workbench/recall/feedback.py) on answers any such query
from a real store with a subset of its memories.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SimilarityRanker
from tests.fuzz_harness import budget
from workbench.models import ObservationDraft
from workbench.recall.query_dates import MAX_DAYS, Day, days_named
from workbench.recall.search import SearchEngine
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow

TempPathFactory = pytest.TempPathFactory
MONTHS = "January February March April May June July August September October November December"
NAMES = MONTHS.split()
pieces = st.one_of(
    st.text(max_size=20),
    st.sampled_from([*NAMES, "may", "Sept.", "2nd", "31st", "of", ",", "2023-02-30", "0000-1-1"]),
    st.integers(min_value=-5, max_value=99999).map(str),
)


@settings(max_examples=budget(400), deadline=None)
@given(st.lists(pieces, max_size=8).map(" ".join))
def test_any_text_names_only_real_days(query: str) -> None:
    days = days_named(query)
    assert len(days) <= MAX_DAYS
    for day in days:
        date(day.year or 2000, day.month, day.day)  # raises on a day that does not exist


@settings(max_examples=budget(200), deadline=None)
@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2999, 12, 31)), st.integers(0, 4))
def test_a_day_in_any_form_is_found(when: date, form: int) -> None:
    month = NAMES[when.month - 1]
    text = [
        f"On {month} {when.day}, what happened?",
        f"what did I say on {when.day} {month} {when.year}",
        f"the {when.day}th of {month.lower()}, {when.year}",
        f"notes from {when.isoformat()} please",
        f"{month[:3]}. {when.day} {when.year}",
    ][form]
    year = None if form == 0 else when.year
    assert days_named(text)[0] == Day(when.month, when.day, year)


@settings(max_examples=budget(60), deadline=None)
@given(st.lists(pieces, max_size=8).map(" ".join))
def test_a_search_naming_any_day_answers(tmp_path_factory: TempPathFactory, query: str) -> None:
    root = tmp_path_factory.mktemp("dates")
    with Store(root / "workbench.db") as store:
        with atomic(store.conn):
            for n, day in enumerate((2, 3, 4), start=1):
                observations.insert(
                    store.conn,
                    ObservationDraft(title=f"turn {n} on May {day}: a film about mountains"),
                    content_session_id=f"day-{day}",
                    project="p",
                    created_ms=int(datetime(2023, 5, day, 12).timestamp() * 1000),
                )
        lifts = load_settings(
            root, search_date_weight=0.5, search_feedback_weight=0.5, search_context_weight=0.5
        )
        engine = SearchEngine(store, lifts, SimilarityRanker({1: 0.3, 2: 0.2}))
        found = engine.search(f"{query} May 3rd film", types="observations")
        assert {h.id for h in found.observations} <= {1, 2, 3}
