"""Rebuild the full-text indexes while the service keeps taking writes.

``schema.rebuild_fts`` empties and refills an index in one transaction: right for a migration,
wrong for ``workbench reindex`` on a live service, where it held the write lock for the whole
rebuild (2.3 s at 100k observations on a quiet box, several seconds on a busy one) and every
hook write meanwhile got 503 ``STORE_BUSY`` and went to the spool.

Here each index is built beside the live one, ``CHUNK`` rows per short transaction, and
swapped in at the end; searches use the old index until the swap. Rows that change while the
build runs are kept right by a second set of triggers on the canonical table, gated by a
frontier (``fts_rebuild_frontier.upto``, advanced in the same transaction as each chunk):

- a row at or below the frontier is already in the new index, so the gated triggers apply its
  insert, update or delete there too (an id that is reused lands here as well);
- a row above it is not there yet, so the triggers leave it to the chunk that reaches it,
  which reads the row as it then is.

The last chunk, the swap (drop the old index and its triggers, rename the new one, create the
live triggers) and the removal of the frontier run in one transaction, so no write falls
between them. A build that is interrupted (kill -9, a stop) leaves a half-built table and
gated triggers behind; ``abandon`` drops them (``Store`` calls it on open, and every rebuild
first), and the live index was never touched.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from workbench.store.connection import atomic
from workbench.store.schema import FTS_TABLES, fts_fill, run_script, split_fts_triggers

CHUNK = 500  # rows per transaction: ~12 ms of the write lock on a quiet 2-core box
FRONTIER = "fts_rebuild_frontier"
SUFFIX = "_rebuild"
TRIGGER_KINDS = ("ai", "ad", "au")

# Called after each committed chunk with (index name, frontier id); returns nothing.
Progress = Callable[[str, int], None]


class RebuildStopped(Exception):
    """The rebuild was asked to stop; the live index is untouched and the scraps are gone."""


def rebuild(
    conn: sqlite3.Connection,
    *,
    chunk: int = CHUNK,
    progress: Progress | None = None,
    stopping: Callable[[], bool] | None = None,
) -> int:
    """Rebuild every FTS table from the canonical tables; returns the rows indexed."""
    abandon(conn)
    total = 0
    for fts, (table, columns) in FTS_TABLES.items():
        total += _rebuild_one(conn, fts, table, columns, chunk, progress, stopping)
    return total


def abandon(conn: sqlite3.Connection) -> bool:
    """Drop what an interrupted rebuild left (gated triggers first: they read the frontier).

    Returns whether there was anything. Cheap when there is nothing: one schema lookup.
    """
    names = {
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE name = ? OR name LIKE ? ESCAPE '\\'",
            (FRONTIER, f"%\\{SUFFIX}%"),
        )
    }
    if not names:
        return False
    with atomic(conn):
        for fts in FTS_TABLES:
            shadow = fts + SUFFIX
            for kind in TRIGGER_KINDS:
                conn.execute(f"DROP TRIGGER IF EXISTS {shadow}_{kind}")
            conn.execute(f"DROP TABLE IF EXISTS {shadow}")
        conn.execute(f"DROP TABLE IF EXISTS {FRONTIER}")
    return True


def _rebuild_one(
    conn: sqlite3.Connection,
    fts: str,
    table: str,
    columns: list[str],
    chunk: int,
    progress: Progress | None,
    stopping: Callable[[], bool] | None,
) -> int:
    shadow = fts + SUFFIX
    upto = f"SELECT upto FROM {FRONTIER} WHERE fts = '{fts}'"
    with atomic(conn):
        (create,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (fts,)
        ).fetchone()
        # The live table's own definition (columns, tokenizer, content=''), under a new name.
        _, _, rest = str(create).partition("USING")
        conn.execute(f"CREATE VIRTUAL TABLE {shadow} USING{rest}")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {FRONTIER} (fts TEXT PRIMARY KEY, upto INTEGER NOT NULL)"
        )
        conn.execute(f"INSERT INTO {FRONTIER} (fts, upto) VALUES (?, 0)", (fts,))
        run_script(conn, split_fts_triggers(table, shadow, columns, upto=upto))
    frontier, indexed = 0, 0
    try:
        while True:
            if stopping is not None and stopping():
                raise RebuildStopped(f"the rebuild of {fts} was stopped at id {frontier}")
            started = time.monotonic()
            with atomic(conn):
                (last,) = conn.execute(
                    f"SELECT max(id) FROM (SELECT id FROM {table} WHERE id > ? ORDER BY id"
                    " LIMIT ?)",
                    (frontier, chunk),
                ).fetchone()
                if last is None:  # caught up: swap in this same transaction
                    _swap(conn, fts, table, columns)
                    break
                cur = conn.execute(
                    fts_fill(shadow, table, columns) + " WHERE id > ? AND id <= ?",
                    (frontier, last),
                )
                indexed += max(cur.rowcount, 0)
                conn.execute(f"UPDATE {FRONTIER} SET upto = ? WHERE fts = ?", (last, fts))
                frontier = int(last)
            if progress is not None:
                progress(fts, frontier)
            # Rest as long as the chunk held the lock (at most half the time is the rebuild's):
            # locks are not FIFO, and on a busy box a woken hook writer needs that long to run
            # before this loop takes the lock again.
            time.sleep(time.monotonic() - started)
    except BaseException:
        abandon(conn)
        raise
    return indexed


def _swap(conn: sqlite3.Connection, fts: str, table: str, columns: list[str]) -> None:
    """Inside the last chunk's transaction: the new index replaces the old one."""
    shadow = fts + SUFFIX
    for kind in TRIGGER_KINDS:
        conn.execute(f"DROP TRIGGER IF EXISTS {shadow}_{kind}")
        conn.execute(f"DROP TRIGGER IF EXISTS {fts}_{kind}")
    conn.execute(f"DROP TABLE {fts}")
    conn.execute(f"ALTER TABLE {shadow} RENAME TO {fts}")
    run_script(conn, split_fts_triggers(table, fts, columns))
    conn.execute(f"DELETE FROM {FRONTIER} WHERE fts = ?", (fts,))
    if conn.execute(f"SELECT count(*) FROM {FRONTIER}").fetchone()[0] == 0:
        conn.execute(f"DROP TABLE {FRONTIER}")
    # A rebuilt index may rank differently (one that had drifted from its rows): a timeline
    # anchor ranked on the old one must not be reused (``recall.anchor_memo``, m016).
    conn.execute("UPDATE observation_generation SET n = n + 1 WHERE id = 1")
