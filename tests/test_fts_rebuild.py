"""``workbench reindex`` rebuilds full text in short transactions beside the live index.

The report: a reindex held the write lock for its whole full-text rebuild (2.3 s at 100k
observations, quiet; longer on a busy box), so every hook write meanwhile waited, got 503
``STORE_BUSY`` and went to the spool (CI caught two such writes under the concurrency load).
``bench/reindex_writes.py`` prints hook-write waits during a reindex, old code against new.

Checked here on real SQLite files:
- between chunks the write lock is free: another thread inserts, updates and deletes rows on
  both sides of the frontier, each within a 0.5 s wait; the finished index holds exactly what a
  one-transaction rebuild of the final rows holds (``fts5vocab``), and FTS5's integrity check
  passes;
- a rebuild killed (SIGKILL) part-way leaves the live index as it was; the next open drops the
  half-built table, its triggers and the frontier, and writes go on;
- a rebuild asked to stop leaves nothing behind.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT
from workbench.models import ObservationDraft
from workbench.store import fts_rebuild, observations
from workbench.store.connection import atomic, write_wait
from workbench.store.database import Store
from workbench.store.schema import FTS_TABLES, rebuild_fts

ROWS = 300
CHUNK = 40


def _add(store: Store, start: int, count: int) -> list[int]:
    with atomic(store.conn):
        return [
            observations.insert(
                store.conn,
                ObservationDraft(
                    title=f"ReviewBuildWorker step {n}",
                    narrative=f"note {n} about cache_{n % 17} and the payments-{n % 5} module",
                    facts=[f"fact {n}"],
                ),
                content_session_id="s",
                project="p",
            )[0]
            for n in range(start, start + count)
        ]


def _vocab(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every (term, doc, column, offset) of every FTS table: the whole index's content."""
    conn = store.conn
    found: dict[str, list[tuple[object, ...]]] = {}
    for fts in FTS_TABLES:
        conn.execute(f"DROP TABLE IF EXISTS temp.v_{fts}")
        conn.execute(f"CREATE VIRTUAL TABLE temp.v_{fts} USING fts5vocab(main, {fts}, instance)")
        found[fts] = [
            tuple(r) for r in conn.execute(f"SELECT * FROM temp.v_{fts} ORDER BY 1,2,3,4")
        ]
        conn.execute(f"DROP TABLE temp.v_{fts}")
    return found


def _integrity(store: Store) -> None:
    for fts in FTS_TABLES:
        store.conn.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 0)")


def _scraps(store: Store) -> list[str]:
    return [
        str(r[0])
        for r in store.conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE '%rebuild%' ORDER BY name"
        )
    ]


def _match(store: Store, words: str) -> list[int]:
    rows = store.conn.execute(
        "SELECT rowid FROM observations_fts WHERE observations_fts MATCH ? ORDER BY rowid",
        (words,),
    )
    return [int(r[0]) for r in rows]


def test_writes_between_chunks_land_at_once_and_the_result_equals_a_one_shot_rebuild(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "workbench.db") as store:
        ids = _add(store, 0, ROWS)
        seen: list[int] = []
        errors: list[BaseException] = []

        def writes(frontier: int) -> None:
            # Another thread, another connection, a wait far below the old whole-rebuild hold.
            try:
                with write_wait(0.5), atomic(store.conn):
                    below, above = ids[frontier // 2], ids[-3 * len(seen)]  # distinct each round
                    store.conn.execute(
                        "UPDATE observations SET narrative = ? WHERE id IN (?, ?)",
                        (f"rewritten zebrafish {frontier}", below, above),
                    )
                    store.conn.execute(
                        "DELETE FROM observations WHERE id IN (?, ?)", (below + 1, above - 1)
                    )
                _add(store, ROWS + 10 * len(seen), 3)
            except BaseException as exc:  # reported in the main thread
                errors.append(exc)

        def progress(fts: str, frontier: int) -> None:
            if fts == "observations_fts" and len(seen) < 4:
                seen.append(frontier)
                other = threading.Thread(target=writes, args=(frontier,))
                other.start()
                other.join()

        indexed = fts_rebuild.rebuild(store.conn, chunk=CHUNK, progress=progress)
        assert errors == []
        assert len(seen) == 4  # the writes happened part-way, four times
        assert indexed >= ROWS
        assert _scraps(store) == []
        _integrity(store)
        rebuilt = _vocab(store)
        assert len(_match(store, "zebrafish")) == 8  # every rewrite is findable, once
        with atomic(store.conn):
            rebuild_fts(store.conn)  # the one-transaction rebuild of the same final rows
        assert _vocab(store) == rebuilt
        # The live triggers are back: a write after the swap is indexed as before.
        new = _add(store, 9000, 1)
        assert _match(store, "fact 9000") == new


def test_a_rebuild_killed_part_way_leaves_the_live_index_and_is_cleaned_on_open(
    tmp_path: Path,
) -> None:
    db = tmp_path / "workbench.db"
    with Store(db) as store:
        _add(store, 0, ROWS)
        before = _vocab(store)
    script = (
        "import os, signal, sys\n"
        "from workbench.store import fts_rebuild\n"
        "from workbench.store.database import Store\n"
        "store = Store(sys.argv[1])\n"
        "def progress(fts, frontier):\n"
        "    if frontier >= 3 * int(sys.argv[2]):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "fts_rebuild.rebuild(store.conn, chunk=int(sys.argv[2]), progress=progress)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(db), str(CHUNK)], cwd=ROOT, timeout=120, check=False
    )
    assert done.returncode == -9
    raw = sqlite3.connect(db)  # no migration, no clean-up: what the kill left
    left = sorted(
        r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE name LIKE '%rebuild%'")
    )
    raw.close()
    assert "fts_rebuild_frontier" in left
    assert "observations_fts_rebuild_ai" in left
    with Store(db) as store:  # the next open drops the scraps
        assert _scraps(store) == []
        assert _vocab(store) == before
        new = _add(store, 5000, 1)
        assert _match(store, "fact 5000") == new
        _integrity(store)


def test_a_stopped_rebuild_leaves_nothing_and_the_live_index_as_it_was(tmp_path: Path) -> None:
    with Store(tmp_path / "workbench.db") as store:
        _add(store, 0, ROWS)
        before = _vocab(store)
        calls: list[int] = []

        def stopping() -> bool:
            calls.append(1)
            return len(calls) > 2

        with pytest.raises(fts_rebuild.RebuildStopped):
            fts_rebuild.rebuild(store.conn, chunk=CHUNK, stopping=stopping)
        assert _scraps(store) == []
        assert _vocab(store) == before


def test_an_empty_store_rebuilds_to_empty_indexes(tmp_path: Path) -> None:
    with Store(tmp_path / "workbench.db") as store:
        assert fts_rebuild.rebuild(store.conn) == 0
        assert _scraps(store) == []
        assert all(rows == [] for rows in _vocab(store).values())
        _integrity(store)


def test_a_rebuild_is_a_new_observation_generation(tmp_path: Path) -> None:
    """A rebuilt index may rank differently (one that had drifted from its rows): the swap
    moves ``observation_generation`` on, so no anchor ranked on the old one is reused."""

    def generation(store: Store) -> int:
        return int(store.conn.execute("SELECT n FROM observation_generation").fetchone()[0])

    with Store(tmp_path / "workbench.db") as store:
        _add(store, 0, ROWS)
        before = generation(store)
        fts_rebuild.rebuild(store.conn, chunk=CHUNK)
        assert generation(store) > before
