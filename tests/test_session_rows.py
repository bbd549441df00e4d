"""One search reads each observation's session and project once (``recall.session_keys``).

The neighbour lift looks up its contenders and the ids beside them; the learned second stage
then asks for the fused head and the ids beside those: nearly the same rows. Within one
search (``fts.one_search``) the second lookup reads only the ids the first did not, an id
found absent included; outside one, every call reads. The answers are the lookups' own:
``session_keys`` as strings (a missing session is ``"None"``), ``rerank_learned._sessions`` as
stored (None).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import store_of_turns
from workbench.recall import fts, fusion, rerank_learned
from workbench.recall.session_keys import session_keys, session_rows
from workbench.store.database import Store

TURNS = [
    ("talk-1", "Can you recommend a novel for my trip to the coast?"),
    ("talk-1", "Try The Little Prince; it is short and gentle."),
    ("talk-1", "Thanks, I will buy it at the station."),
    ("talk-2", "The quarterly budget spreadsheet has a broken formula."),
    ("talk-2", "Column F divides by an empty cell."),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with store_of_turns(tmp_path / "workbench.db", TURNS) as s:
        s.conn.execute("UPDATE observations SET content_session_id = NULL WHERE id = 5")
        yield s


def read_ids(conn: sqlite3.Connection) -> list[str]:
    """The session lookups' statements ``conn`` runs from now on (traced)."""
    seen: list[str] = []

    def trace(sql: str) -> None:
        if "content_session_id, project FROM observations" in sql:
            seen.append(sql)

    conn.set_trace_callback(trace)
    return seen


def test_the_learned_stage_reads_no_row_the_neighbour_lift_read(store: Store) -> None:
    seen = read_ids(store.conn)
    with fts.one_search():
        beside = fusion.neighbours(store.conn, [2, 4])  # reads 1..5
        sessions = rerank_learned._sessions(store.conn, [2, 3])  # wants 1..4: all read
    assert beside == {2: (1, 3), 4: ()}
    assert sessions == {
        1: ("p", "talk-1"),
        2: ("p", "talk-1"),
        3: ("p", "talk-1"),
        4: ("p", "talk-2"),
    }
    assert len(seen) == 1, seen


def test_an_id_found_absent_is_not_read_again(store: Store) -> None:
    seen = read_ids(store.conn)
    with fts.one_search():
        assert session_rows(store.conn, [5, 6, 99]) == {5: (None, "p")}
        assert session_rows(store.conn, [99, 6]) == {}
        assert session_rows(store.conn, [4, 99]) == {4: ("talk-2", "p")}
    assert len(seen) == 2  # the second call read nothing; the third only id 4


def test_outside_a_search_every_call_reads(store: Store) -> None:
    seen = read_ids(store.conn)
    assert session_keys(store.conn, [4, 5]) == {4: ("talk-2", "p"), 5: ("None", "p")}
    assert session_keys(store.conn, [4, 5]) == {4: ("talk-2", "p"), 5: ("None", "p")}
    assert len(seen) == 2


def test_a_search_sees_what_was_written_before_it_not_an_earlier_ones(store: Store) -> None:
    with fts.one_search():
        assert session_rows(store.conn, [3]) == {3: ("talk-1", "p")}
    store.conn.execute("UPDATE observations SET content_session_id = 'talk-9' WHERE id = 3")
    with fts.one_search():
        assert session_rows(store.conn, [3]) == {3: ("talk-9", "p")}


def test_a_filtered_lookup_reads_its_own_rows(store: Store) -> None:
    with fts.one_search():
        session_rows(store.conn, [1, 2, 3, 4, 5])
        seen = read_ids(store.conn)
        # The session term's turns-only lookup has its own conditions: never the memo.
        assert session_keys(store.conn, [4, 5], "content_session_id IS NOT NULL") == {
            4: ("talk-2", "p")
        }
    assert len(seen) == 1
