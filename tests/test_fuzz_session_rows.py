"""Fuzz: within one search, the session lookups answer what a lookup of their own would.

``session_keys.session_rows`` keeps what it read for the rest of a search (``fts.one_search``)
so the learned stage does not read again the rows the neighbour lift read (issue 21). For any
sequence of lookups (any ids: repeated, absent, negative, past the table, none) through
``session_rows``, ``session_keys`` and the learned stage's ``_sessions``, each answers what
the same call answers outside a search, where nothing is kept; and no id is read twice.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import store_of_turns
from tests.fuzz_harness import budget
from workbench.recall import fts, rerank_learned
from workbench.recall.session_keys import session_keys, session_rows
from workbench.store.database import Store

pytestmark = pytest.mark.slow

TURNS = [(f"talk-{n % 3}", f"turn {n} of a talk") for n in range(12)]
LOOKUPS = {
    "rows": session_rows,
    "keys": session_keys,
    "learned": rerank_learned._sessions,
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path = tmp_path_factory.mktemp("sessions") / "workbench.db"
    with store_of_turns(path, TURNS) as made:
        made.conn.execute("UPDATE observations SET content_session_id = NULL WHERE id % 5 = 0")
        made.conn.execute("DELETE FROM observations WHERE id = 7")
    return Store(path)


calls = st.lists(
    st.tuples(st.sampled_from(sorted(LOOKUPS)), st.lists(st.integers(-3, 16), max_size=20)),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=budget(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(calls=calls)
def test_each_lookup_in_a_search_answers_as_it_would_alone(
    store: Store, calls: list[tuple[str, list[int]]]
) -> None:
    conn = store.conn
    alone = [LOOKUPS[name](conn, ids) for name, ids in calls]
    read: list[int] = []
    conn.set_trace_callback(lambda sql: read.append(_ids_in(sql)) if _lookup(sql) else None)
    try:
        with fts.one_search():
            together = [LOOKUPS[name](conn, ids) for name, ids in calls]
    finally:
        conn.set_trace_callback(None)
    assert together == alone
    wanted = {j for name, ids in calls for i in ids for j in _asked(name, i)}
    assert sum(read) <= len(wanted)  # each id at most once


def _lookup(sql: str) -> bool:
    return "content_session_id, project FROM observations" in sql


def _ids_in(sql: str) -> int:
    """How many ids a lookup's ``id IN (…)`` names."""
    return sql.rsplit(" IN (", 1)[1].split(")", 1)[0].count(",") + 1


def _asked(name: str, i: int) -> tuple[int, ...]:
    return (i - 1, i, i + 1) if name == "learned" else (i,)


def test_the_store_is_what_the_cases_assume(store: Store) -> None:
    conn: sqlite3.Connection = store.conn
    assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 11
    assert Path(conn.execute("PRAGMA database_list").fetchone()[2]).name == "workbench.db"
