"""The pieces ``bench/relevance_prf.py`` builds its verdict on (pseudo-relevance feedback).

The bench's verdict is only as good as these: Rocchio must move the query towards the
feedback and stay a unit vector, the engine must search with ``q'`` when given the bench's
ranker (through the real ``SearchEngine`` on a real store and FAISS index), the session's
feedback turns must be those of the first hit's session only, and the cross-validation must
choose on the other sets, with ties going to "off".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench import relevance_prf
from bench.relevance_prf import Case
from workbench.models import ObservationDraft
from workbench.recall import vectors
from workbench.recall.search import SearchEngine
from workbench.store import observations as store_obs
from workbench.store.connection import atomic
from workbench.store.database import Store


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_rocchio_moves_the_query_towards_the_feedback_and_stays_a_unit_vector() -> None:
    q, a, b = _unit(1, 0, 0), _unit(0, 1, 0), _unit(0, 0, 1)
    moved = relevance_prf.rocchio(q, [a, b], 0.5)
    assert float(np.linalg.norm(moved)) == pytest.approx(1.0, abs=1e-6)
    assert float(moved @ a) == pytest.approx(float(moved @ b), abs=1e-6)
    assert float(moved @ a) > 0.3  # moved towards the feedback...
    assert float(moved @ q) > float(moved @ a)  # ...the query still weighing most
    assert np.allclose(relevance_prf.rocchio(q, [a], 1.0), q)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = Store(tmp_path / "prf.db")
    turns = [
        ("s1", "we planned the trip to Lisbon"),
        ("s1", "book the flight on Friday"),
        ("s1", "the hotel is near the river"),
        ("s2", "my sister paints landscapes"),
        ("s2", "she sold one at the fair"),
    ]
    with atomic(opened.conn):
        for n, (session, text) in enumerate(turns):
            store_obs.insert(
                opened.conn,
                ObservationDraft(type="discovery", title=text),
                content_session_id=session,
                project="p",
                created_ms=1_700_000_000_000 + n * 60_000,
            )
    return opened


def test_session_turns_are_the_first_hits_session_within_the_window(store: Store) -> None:
    ids = [int(r[0]) for r in store.conn.execute("SELECT id FROM observations ORDER BY id")]
    assert relevance_prf.session_turns(store.conn, ids[2], 5) == ids[:3]  # not s2's turns
    assert relevance_prf.session_turns(store.conn, ids[0], 1) == ids[:2]
    assert relevance_prf.session_turns(store.conn, ids[3], 20) == ids[3:]


def test_the_engine_searches_with_the_moved_query_when_given_the_benchs_ranker(
    store: Store,
) -> None:
    ids = [int(r[0]) for r in store.conn.execute("SELECT id FROM observations ORDER BY id")]
    index = vectors.VectorIndex("minilm", 3, "flat")
    matrix = np.stack([_unit(1, 0.1 * n, 0) for n in range(4)] + [_unit(0, 0, 1)])
    index.add(ids, [f"h{n}" for n in range(5)], matrix)
    # q' is the last turn's own direction: through the real engine it must come first,
    # though the words ("zzz") match nothing and the original query pointed elsewhere.
    ranker = relevance_prf.QueryVectorRanker(index, _unit(0, 0, 1))
    found = SearchEngine(store.conn, None, ranker).search(
        "zzz", None, types="observations", mode="vector", limit=5
    )
    assert [h.id for h in found.observations][0] == ids[4]


def _case(set_name: str, cls: str, first: list[int], better: list[int]) -> Case:
    return Case(
        set_name,
        cls,
        (7,),
        {
            "hybrid": first,
            "off": first,
            "fts": [],
            "vector": [],
            relevance_prf.rm3fts_key(0.05): better,
            relevance_prf.rm3fts_key(0.15): first,
            relevance_prf.rm3fts_key(0.35): first,
        },
    )


def test_the_choice_is_made_on_the_other_sets_and_ties_go_to_off() -> None:
    miss, hit = [1, 2, 3], [7, 1, 2]
    by_set = {
        "a": [_case("a", "x", miss, hit)],  # the feedback helps only on "a"
        "b": [_case("b", "x", hit, hit)],  # no change on "b" and "c"
        "c": [_case("c", "x", hit, hit)],
    }
    # Leaving "a" out, the other sets see no gain: off (the tie); leaving "b" out, "a" is
    # among the training sets and its gain chooses the point.
    assert relevance_prf.choose(by_set, "rm3fts", ["b", "c"]) == relevance_prf.OFF
    assert relevance_prf.choose(by_set, "rm3fts", ["a", "c"]) == relevance_prf.rm3fts_key(0.05)
    assert relevance_prf.choose(by_set, "rm3fts", []) == relevance_prf.OFF
