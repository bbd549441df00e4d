"""Each memory's words kept for the second stage (``observation_tokens``, issue 21).

The learned stage tokenized its ~30 candidates on every search (MaxSim's word pieces and the
features' stemmed words): ~1.7 ms of a timeline by query at 100k. The indexer now makes each
memory's words once (``recall.token_rows``) and a search reads them with the candidates'
text. Real store, real static model (``make install``'s), the real indexer pass, the real
forget: a search with rows answers exactly what it answered without, tokenizing only the
query; a row made from another text or by another recipe is never read; a row goes with its
memory's text (forget, edit, a forget while the row was being made); reindex empties the
table and the indexer's passes fill it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.onnx_model import installed_static_model  # noqa: F401  (fixture)
from tests.relevance_set import QUERIES, Seeded, seed
from tests.test_search import KeywordRanker
from workbench import forget
from workbench.recall import (
    rerank_features,
    rerank_learned,
    rerank_maxsim,
    rerank_tokens,
    token_rows,
)
from workbench.recall.indexer import Indexer, ReindexJob
from workbench.recall.search import SearchEngine
from workbench.settings import Settings, load_settings
from workbench.store.connection import atomic
from workbench.store.database import Store


@pytest.fixture
def static(installed_static_model: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """What ``make install`` leaves: the static model the learned stage reads."""
    monkeypatch.setenv("WORKBENCH_STATIC_MODEL_DIR", str(installed_static_model))
    return installed_static_model


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[Store, Seeded]]:
    with Store(tmp_path / "workbench.db") as store:
        yield store, seed(store)


def settings_of(where: Path, **extra: Any) -> Settings:
    chosen = {"search_rerank": True, "search_rerank_method": "learned", "embedder": "minilm"}
    return load_settings(where, **{**chosen, **extra})


def fill_all(store: Store, table: Any) -> int:
    written, after = 0, 0
    while True:
        filled = token_rows.fill(store.conn, table, after, limit=7)  # several batches
        written, after = written + filled.written, filled.after
        if filled.done:
            return written


def rows(store: Store) -> dict[int, tuple[Any, ...]]:
    return {
        int(r[0]): tuple(r)
        for r in store.conn.execute("SELECT * FROM observation_tokens ORDER BY observation_id")
    }


def answers(store: Store, settings: Settings) -> list[list[tuple[int, float, str | None]]]:
    """Every relevance query's observation hits (id, score, stage), caches emptied first."""
    engine = SearchEngine(store, settings, KeywordRanker(store))
    out = []
    for query in QUERIES:
        rerank_features.clear_cache()
        rerank_maxsim.clear_cache()
        found = engine.search(query, types="observations", limit=10)
        assert found.degraded is None
        out.append([(h.id, h.score, h.rerank) for h in found.observations])
    return out


class Tokenized:
    """The texts a search tokenized: the stage's words and pieces, counted where they are made."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.words: list[str] = []
        self.pieces: list[str] = []
        words_of, fresh = rerank_features.words_of, rerank_maxsim.fresh_pieces

        def counted_words(text: str) -> tuple[str, ...]:
            self.words.append(text)
            return words_of(text)

        def counted_pieces(table: Any, texts: list[str], **kw: Any) -> list[list[int]]:
            self.pieces.extend(texts)
            return fresh(table, texts, **kw)

        monkeypatch.setattr(rerank_features, "words_of", counted_words)
        monkeypatch.setattr(rerank_maxsim, "fresh_pieces", counted_pieces)


@pytest.fixture
def answered(
    seeded: tuple[Store, Seeded], static: Path, tmp_path: Path
) -> tuple[Store, Seeded, Settings, list[list[tuple[int, float, str | None]]]]:
    """The seeded store, the learned stage's settings and its answers before any row."""
    store, ids = seeded
    settings = settings_of(tmp_path / "s")
    without = answers(store, settings)
    assert any(label == "learned" for hits in without for _, _, label in hits)
    return store, ids, settings, without


def test_a_search_reads_the_kept_words_and_tokenizes_only_its_query(
    answered: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _, settings, without = answered
    table = token_rows.table_for(settings)
    assert table is not None
    assert fill_all(store, table) == len(rows(store)) > 0
    seen = Tokenized(monkeypatch)
    assert answers(store, settings) == without  # same ids, scores and stages
    queries = set(QUERIES)
    assert seen.pieces
    assert set(seen.pieces) <= queries
    assert seen.words
    assert set(seen.words) <= queries


def test_a_row_made_from_another_text_or_recipe_is_not_read(
    answered: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, ids, settings, without = answered
    fill_all(store, token_rows.table_for(settings))
    # Each row says it was made otherwise, and holds what a search would rank wrongly by.
    wrong_words, wrong_pieces = "title_words = 'zz', body_words = 'zz'", "pieces = x'0100'"
    spoilt = {
        ids.ids["refund-idempotency"]: f"digest = zeroblob(16), {wrong_words}, {wrong_pieces}",
        ids.ids["webhook-retry"]: f"words_version = words_version + 1, {wrong_words}",
        ids.ids["auth-redirect-loop"]: f"pieces_recipe = 'another tokenizer', {wrong_pieces}",
    }
    with atomic(store.conn):
        for observation_id, change in spoilt.items():
            store.conn.execute(
                f"UPDATE observation_tokens SET {change} WHERE observation_id = ?",
                (observation_id,),
            )
    seen = Tokenized(monkeypatch)
    assert answers(store, settings) == without
    titles = {
        str(r[0])
        for r in store.conn.execute(
            f"SELECT title FROM observations WHERE id IN ({','.join('?' * len(spoilt))})",
            list(spoilt),
        )
    }
    # Made again: the words of the first two, the pieces of the first and the third.
    assert sum(t in seen.words for t in titles) == 2
    assert sum(any(p.startswith(t) for p in seen.pieces) for t in titles) == 2


def test_a_row_goes_with_its_memory_text(
    seeded: tuple[Store, Seeded], static: Path, tmp_path: Path, data_dir: Path
) -> None:
    store, ids = seeded
    fill_all(store, token_rows.table_for(settings_of(tmp_path / "s")))
    forgotten, edited, moved = (
        ids.ids["secret-leak"],
        ids.ids["docker-slim"],
        ids.ids["dark-mode"],
    )
    report = forget.forget(store.conn, data_dir / "spool", [forgotten])
    assert [d.id for d in report.deleted] == [forgotten]
    with atomic(store.conn):
        store.conn.execute(
            "UPDATE observations SET narrative = 'rewritten' WHERE id = ?", (edited,)
        )
        store.conn.execute("UPDATE observations SET project = 'elsewhere' WHERE id = ?", (moved,))
    kept = rows(store)
    assert forgotten not in kept
    assert edited not in kept
    assert moved in kept  # its text did not change


def test_a_memory_forgotten_or_edited_while_its_row_is_made_gets_none(
    seeded: tuple[Store, Seeded],
    static: Path,
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, ids = seeded
    forgotten = ids.ids["secret-leak"]
    edited: list[int] = []
    make = token_rows.rows_of

    def meanwhile(table: Any, texts: Any) -> Any:
        made = make(table, texts)  # made from the text as it was read
        if forgotten in texts:  # the user forgets it and edits its batch-mate before the write
            forget.forget(store.conn, data_dir / "spool", [forgotten])
            edited.append(min(set(texts) - {forgotten}))
            with atomic(store.conn):
                store.conn.execute(
                    "UPDATE observations SET title = 'renamed' WHERE id = ?", (edited[0],)
                )
        return made

    monkeypatch.setattr(token_rows, "rows_of", meanwhile)
    fill_all(store, token_rows.table_for(settings_of(tmp_path / "s")))
    kept = rows(store)
    assert edited
    assert forgotten not in kept
    assert edited[0] not in kept
    assert len(kept) == len(ids.ids) - 2
    # The next sweep makes the edited memory's row from its new text.
    monkeypatch.setattr(token_rows, "rows_of", make)
    fill_all(store, token_rows.table_for(settings_of(tmp_path / "s")))
    assert rows(store)[edited[0]][3] == "renam"


def test_reindex_empties_the_rows_and_the_indexer_passes_make_them_again(
    seeded: tuple[Store, Seeded], static: Path, data_dir: Path
) -> None:
    store, ids = seeded
    settings = settings_of(data_dir)
    indexer = Indexer(store, settings, lambda _: (None, "no embedder in this test"))
    assert indexer.status()["wordsKept"] is False
    indexer._fill_tokens()
    assert set(rows(store)) == set(ids.ids.values())
    assert all(r[5] is not None and r[6] for r in rows(store).values())  # pieces made too
    assert indexer.status()["wordsKept"] is True

    job = indexer.reindex(ReindexJob(id=1))
    assert job.state == "done", job.error
    assert rows(store) == {}
    indexer._fill_tokens()
    assert set(rows(store)) == set(ids.ids.values())


def test_a_hook_burst_holds_the_words_back_so_its_memories_reach_a_tier_first(
    seeded: tuple[Store, Seeded], static: Path, data_dir: Path
) -> None:
    """While hooks post a burst, the indexer's pass makes no words: it returns at once, so the
    next pass gives the burst's memories their vectors (``sync``).

    Why: right after a 100k catch-up the words of every memory are still to be made (the
    fill waits while the worker embeds), and a pass made 20 batches waiting up to 2 s for the
    burst between each: ~41 s in which no memory of a 50 events/s burst reached any tier
    (``bench/vectors_catch_up.py``: 2,110 memories unsearchable by meaning at once, stop 47).
    The words are derived and optional; the burst's vectors are what a search needs."""
    store, ids = seeded
    busy = [True]
    indexer = Indexer(
        store,
        settings_of(data_dir),
        lambda _: (None, "no embedder in this test"),
        ingest_busy=lambda: busy[0],
    )
    indexer._fill_tokens()
    assert rows(store) == {}
    assert indexer.status()["wordsKept"] is False
    busy[0] = False  # the burst is over: the next pass makes them
    indexer._fill_tokens()
    assert set(rows(store)) == set(ids.ids.values())
    assert indexer.status()["wordsKept"] is True


@pytest.mark.parametrize("off", [{"search_rerank": False}, {"embedder": "none"}])
def test_with_no_stage_that_reads_words_nothing_is_made(
    seeded: tuple[Store, Seeded], data_dir: Path, off: dict[str, Any]
) -> None:
    """No second stage, or no embedder (every search is then full text: no stage runs)."""
    store, _ = seeded
    indexer = Indexer(store, settings_of(data_dir, **off), lambda _: (None, "-"))
    indexer._fill_tokens()
    assert rows(store) == {}
    assert indexer.status()["wordsKept"] is None


# What this code makes of a few texts. A change here changes what a kept row holds: bump
# ``rerank_features.WORDS_VERSION`` or ``rerank_maxsim.PIECES_VERSION`` (rows of the old
# recipe are then made again), and only then update the digests.
SAMPLES = (
    ("ReviewBuildWorker retried refunds", "Caroline: the check_token of payments-api, 2026"),
    ("Ünïcode naïve café — 東京 résumé", "tabs\tand\nnewlines  XMLHttpRequest IDs 10GB"),
    ("", "   "),
)
WORDS_DIGEST = "76220c2ad9abb0d6"
PIECES_DIGEST = "21758fb40284d3f2"


def digest_of(parts: list[Any]) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]


def test_the_words_and_pieces_kept_are_pinned_to_their_recipe(static: Path) -> None:
    table = rerank_tokens.load_static(static)
    words = [rerank_features.words_of(text) for pair in SAMPLES for text in pair]
    texts = [f"{title} {body}".strip() for title, body in SAMPLES]
    pieces = rerank_maxsim.fresh_pieces(table, texts, keep=False)
    assert (rerank_features.WORDS_VERSION, digest_of(words)) == (1, WORDS_DIGEST)
    assert (rerank_maxsim.PIECES_VERSION, digest_of(pieces)) == (1, PIECES_DIGEST)


def test_the_learned_stage_reads_its_candidates_text_once(
    seeded: tuple[Store, Seeded], static: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept rows come with the candidates' text: no second statement for them."""
    store, _ = seeded
    settings = settings_of(tmp_path / "s")
    fill_all(store, token_rows.table_for(settings))
    calls: list[int] = []
    load = rerank_features.load_texts

    def counted(conn: Any, ids: Any) -> Any:
        calls.append(len(ids))
        return load(conn, ids)

    monkeypatch.setattr(rerank_features, "load_texts", counted)
    engine = SearchEngine(store, settings, KeywordRanker(store))
    engine.search("why were refunds charged twice", types="observations", limit=10)
    assert len(calls) == 1
    assert rerank_learned.weights().depth >= calls[0] > 1
