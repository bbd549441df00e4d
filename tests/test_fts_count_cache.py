"""Full-text searches count a piece's small document frequency once while the store is unchanged.

Issue 21 (full text p50 ≤ 5 ms at 100k): a search recounted every piece found in at most
``fts.COMMON_DF`` rows, up to a dozen count statements a search. Now:

- a small count is kept per connection while ``PRAGMA data_version`` (another connection's
  commit) and ``total_changes`` (its own writes) are unchanged, so the same words searched
  again are not recounted; a word stored since, by this connection or by another (as the
  service's worker stores it), is still found by the next search;
- a phrase holding a word that no row holds is not counted (it matches no row).

Every count and every answer is the one the engine gave before: the counts against
``doc_frequency``'s own statement, the answers against the search run in a fresh thread of
its own (no cache) on the same store, and on a real 100k store by ``bench/search.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.relevance_set import QUERIES, Seeded, seed
from workbench.models import ObservationDraft
from workbench.recall import fts
from workbench.recall.search import SearchEngine
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[Store, Seeded]]:
    store = Store(tmp_path / "workbench.db")
    labels = seed(store)
    yield store, labels
    store.close()


def counts_run(conn: sqlite3.Connection, call: Any) -> tuple[Any, list[str]]:
    """``call()``'s result and the document-frequency counts it ran on ``conn``."""
    ran: list[str] = []
    conn.set_trace_callback(ran.append)
    try:
        result = call()
    finally:
        conn.set_trace_callback(None)
    return result, [s for s in ran if s.startswith("SELECT count(*) FROM (SELECT 1 FROM")]


def fresh_answer(store: Store, query: str, mode: str) -> dict[str, Any]:
    """The search's answer from a new thread (its own connection, no count kept)."""
    out: dict[str, Any] = {}

    def run() -> None:
        out["answer"] = SearchEngine(store, None).search(query, mode=mode).to_json()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return dict(out["answer"])


def test_the_same_search_again_counts_nothing_and_answers_alike(
    seeded: tuple[Store, Seeded],
) -> None:
    store, _ = seeded
    engine = SearchEngine(store, None)
    for query in QUERIES:
        # No totals: the text index counts none, so every count is a document frequency.
        first, counted = counts_run(
            store.conn, lambda q=query: engine.search(q, mode="fts", count_totals=False)
        )
        assert counted, query  # the relevance set's counts are all small: taken the first time
        again, recounted = counts_run(
            store.conn, lambda q=query: engine.search(q, mode="fts", count_totals=False)
        )
        assert recounted == [], query
        assert again.to_json() == first.to_json(), query
        assert engine.search(query, mode="fts").to_json() == fresh_answer(store, query, "fts")


def test_a_word_stored_by_this_connection_is_found_by_the_next_search(
    seeded: tuple[Store, Seeded],
) -> None:
    store, _ = seeded
    engine = SearchEngine(store, None)
    assert engine.search("zebrafish crossing", mode="fts").observations == []
    with atomic(store.conn):
        added, _ = observations.insert(
            store.conn,
            ObservationDraft(title="zebrafish crossing", narrative="a new word"),
            content_session_id=None,
            project="infra",
        )
    assert [h.id for h in engine.search("zebrafish crossing", mode="fts").observations] == [added]


def test_a_word_another_connection_stored_is_found_by_the_next_search(
    seeded: tuple[Store, Seeded], tmp_path: Path
) -> None:
    store, _ = seeded
    engine = SearchEngine(store, None)
    assert engine.search("zebrafish crossing", mode="fts").observations == []
    writer = Store(tmp_path / "workbench.db")  # the service's worker writes on its own
    try:
        with atomic(writer.conn):
            added, _ = observations.insert(
                writer.conn,
                ObservationDraft(title="zebrafish crossing", narrative="a new word"),
                content_session_id=None,
                project="infra",
            )
    finally:
        writer.close()
    found = engine.search("zebrafish crossing", mode="fts")
    assert [h.id for h in found.observations] == [added]
    assert found.to_json() == fresh_answer(store, "zebrafish crossing", "fts")


def test_a_phrase_holding_an_absent_word_is_not_counted(seeded: tuple[Store, Seeded]) -> None:
    store, _ = seeded
    conn = store.conn
    pieces = fts.query_pieces("refund charged zzyzxnothing twice")
    phrases = [p for p in pieces if " " in p]
    assert phrases  # the whole query and its runs of content words
    _, cap = fts.df_cap(conn, "observations")
    with fts.one_search():
        got, counted = counts_run(conn, lambda: fts.frequencies(conn, "observations", pieces, cap))
    assert len(counted) == len(pieces) - len(phrases)  # the words only
    sql = "SELECT count(*) FROM (SELECT 1 FROM observations_fts WHERE observations_fts MATCH ?)"
    assert got == {p: conn.execute(sql, (p,)).fetchone()[0] for p in pieces}
    assert all(got[p] == 0 for p in phrases)


@pytest.mark.parametrize(
    "query",
    [
        "refund charged twice",  # every word present: the phrases are counted
        "refund charged zzyzx",  # one word absent: the phrases holding it are 0
        "webhooks retry* failed",  # a prefix word is no evidence
        "café refund",  # a non-ASCII word is no evidence
        "what is this",  # stopwords only
    ],
)
def test_frequencies_are_each_pieces_own_count(seeded: tuple[Store, Seeded], query: str) -> None:
    store, _ = seeded
    conn = store.conn
    pieces = fts.query_pieces(query)
    for kind in ("observations", "sessions", "prompts"):
        fts_table = fts.tables_of(kind)[0]
        _, cap = fts.df_cap(conn, kind)
        with fts.one_search():
            got = fts.frequencies(conn, kind, pieces, cap)
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {fts_table} WHERE {fts_table} MATCH ? LIMIT ?)"
        assert got == {p: conn.execute(sql, (p, cap)).fetchone()[0] for p in pieces}, kind


@pytest.mark.parametrize("mode", ["hybrid", "fts"])
def test_a_search_from_the_edge_counts_each_piece_once(
    seeded: tuple[Store, Seeded], mode: str
) -> None:
    """``SearchEngine.run`` (what ``/api/search`` calls) shares ``search``'s one-search memo:
    each piece's document frequency is counted at most once per kind, the database named
    once, and the answer is ``search``'s."""
    from tests.test_search import KeywordRanker
    from workbench.recall.search_query import SearchQuery

    store, _ = seeded
    engine = SearchEngine(store, None, ranker=KeywordRanker(store))
    for query in QUERIES:
        ask = SearchQuery.model_validate({"query": query, "mode": mode})
        fts._df_cache.clear()  # every count taken by this search
        ran: list[str] = []
        store.conn.set_trace_callback(ran.append)
        try:
            got = engine.run(ask, count_totals=False)
        finally:
            store.conn.set_trace_callback(None)
        counts = [s for s in ran if s.startswith("SELECT count(*) FROM (SELECT 1 FROM")]
        assert len(counts) == len(set(counts)), query
        assert sum(s == "PRAGMA database_list" for s in ran) <= 1, query
        want = engine.search(query, mode=mode, count_totals=False)
        assert got.to_json() == want.to_json(), query
