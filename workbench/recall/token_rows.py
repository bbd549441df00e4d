"""``observation_tokens`` (``schema.m017``): each memory's words as the second stage reads them.

Why: the learned second stage tokenizes its ~30 candidates on every search (MaxSim's word
pieces, the features' stemmed words of title and body), ~1.7 ms of a timeline by query's
~15 ms CPU at 100k when the candidates are new to the process (issue 21). A memory's words
never change while its text does not, so the indexer thread makes them once per memory and
keeps them here; ``rerank_features.load_texts`` reads them in the same ``SELECT`` as the
candidates' text.

A row is used only when it was made from the text read with it (``rerank_features.digest``
of title and body) by the code and tokenizer that run now (``WORDS_VERSION``,
``rerank_maxsim.pieces_recipe``): anything else, or no row, is tokenized as before, so a
search's answer never depends on this table. What a row holds is what live tokenizing gives,
bit for bit (``rerank_features.words_of``, ``rerank_maxsim.fresh_pieces``; fuzz:
tests/test_fuzz_token_rows.py).

Privacy: a row is a copy of its memory's words. Triggers delete it with its observation or
when the text changes (``m017``), so a forget's purge finds none; a row is written only
inside a transaction that sees its observation with the text it was made from (``fill``), so
a memory forgotten while its row was being made gets none. Derived: ``workbench reindex``
empties the table (``clear``) and the indexer fills it again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.recall import rerank_features, rerank_maxsim
from workbench.recall.rerank_tokens import TokenTable
from workbench.store.connection import atomic

# Observations made per ``fill``: ~40 ms of the indexer thread's CPU (a 100k store takes ~200
# of them, ~10 s of CPU in all), and the write transaction holds the lock ~6 ms of that.
BATCH = 512


@dataclass(frozen=True)
class Filled:
    """One ``fill``: rows written, the id the next call starts after, and whether the sweep
    reached the last observation (nothing more to make until something changes)."""

    written: int
    after: int
    done: bool


def table_for(settings: Any) -> TokenTable | None:
    """The word-piece table the configured second stage reads (``rerank._first_stage``), or
    None: no stage that reads pieces, or its files are not built (words are kept anyway)."""
    from workbench.recall import rerank, rerank_tokens

    if not rerank.enabled(settings):
        return None
    try:
        if rerank.method(settings) == "learned":
            return rerank_tokens.load_static()
        if rerank.method(settings) == "maxsim":
            return rerank_tokens.load()
    except (OSError, ValueError):
        return None
    return None


def wanted(settings: Any) -> bool:
    """Whether searches read rows at all: a second stage that reads words runs, and it runs
    only on a hybrid ranking (no embedder: every search is full text)."""
    from workbench.recall import rerank

    return (
        getattr(settings, "embedder", "minilm") != "none"
        and rerank.enabled(settings)
        and rerank.method(settings) in ("learned", "maxsim", "features")
    )


def fill(
    conn: sqlite3.Connection, table: TokenTable | None, after: int = 0, limit: int = BATCH
) -> Filled:
    """Make the rows of up to ``limit`` observations past id ``after`` that have none usable.

    ``table``: whose pieces to keep (None: words only; a search then tokenizes pieces). The
    words and pieces are made outside any transaction; a row is written only if, inside the
    write transaction, its observation still holds the text it was made from.
    """
    recipe = rerank_maxsim.pieces_recipe(table) if table is not None else None
    ids = [
        int(r[0])
        for r in conn.execute(
            "SELECT o.id FROM observations o"
            " LEFT JOIN observation_tokens t ON t.observation_id = o.id"
            " WHERE o.id > ? AND (t.observation_id IS NULL OR t.words_version IS NOT ?"
            " OR t.pieces_recipe IS NOT ?) ORDER BY o.id LIMIT ?",
            (after, rerank_features.WORDS_VERSION, recipe, limit),
        )
    ]
    if not ids:
        return Filled(0, after, True)
    made = rows_of(table, rerank_features.load_texts(conn, ids))
    with atomic(conn):
        now = rerank_features.load_texts(conn, ids)
        kept = [
            row
            for row in made
            if (found := now.get(row[0])) is not None
            and rerank_features.digest(found["title"], found["body"]) == row[1]
        ]
        conn.executemany(
            "INSERT OR REPLACE INTO observation_tokens (observation_id, digest, words_version,"
            " title_words, body_words, pieces_recipe, pieces) VALUES (?, ?, ?, ?, ?, ?, ?)",
            kept,
        )
    return Filled(len(kept), ids[-1], len(ids) < limit)


def rows_of(
    table: TokenTable | None, texts: dict[int, rerank_features.ObsText]
) -> list[tuple[int, bytes, int, str, str, str | None, bytes | None]]:
    """The ``observation_tokens`` rows of ``texts`` (``load_texts``), tokenized now."""
    ids = sorted(texts)
    pieces: Sequence[list[int] | None] = [None] * len(ids)
    if table is not None:
        candidate = [rerank_maxsim.candidate_text(texts[i]) for i in ids]
        pieces = rerank_maxsim.fresh_pieces(table, candidate, keep=False)
    recipe = rerank_maxsim.pieces_recipe(table) if table is not None else None
    out = []
    for i, kept in zip(ids, pieces, strict=True):
        packed = None if table is None or kept is None else rerank_maxsim.packed(table, kept)
        title, body = texts[i]["title"], texts[i]["body"]
        out.append(
            (
                i,
                rerank_features.digest(title, body),
                rerank_features.WORDS_VERSION,
                " ".join(rerank_features.words_of(title)),
                " ".join(rerank_features.words_of(body)),
                recipe,
                packed,
            )
        )
    return out


def clear(conn: sqlite3.Connection) -> int:
    """Delete every row (``workbench reindex``: derived data rebuilt); returns how many."""
    with atomic(conn):
        return int(conn.execute("DELETE FROM observation_tokens").rowcount)
