"""All SQLite connection policy lives here, plus ``atomic()``.

Pragmas (set on every connection):
- ``journal_mode=WAL``: readers (CLI, DuckDB, notebooks) never block the one writer, and a
  crash mid-write rolls back to the last commit instead of corrupting the file.
- ``synchronous=NORMAL``: in WAL mode a power loss can lose the last few commits but never
  corrupts the database; a process kill -9 loses nothing committed. SQLite is canonical here,
  so ``OFF`` (which basic-memory can afford because its markdown is canonical) is not an option.
- ``busy_timeout=10000``: a reader's checkpoint or a second connection waits instead of failing
  with "database is locked".
- ``foreign_keys=ON``: SQLite leaves them off by default; our rows reference sessions.

Functions (registered on every connection): ``wb_split_identifiers``, which the FTS triggers
call to index CamelCase words by their parts too (``store.identifiers``).
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from workbench.store import identifiers

BUSY_TIMEOUT_MS = 10_000
_savepoints = itertools.count(1)
_write_locks: dict[str, threading.RLock] = {}
_write_locks_guard = threading.Lock()


class Connection(sqlite3.Connection):
    """A connection that knows the in-process write lock of its database file.

    Why: when two threads of one process (the request loop and the worker) both write, SQLite
    makes the loser sleep in its busy handler (1 ms, 2 ms, 5 ms…), which capped ingest at a
    few hundred events/s. Serialising writers on a Python lock first hands the database over
    in microseconds; ``busy_timeout`` still covers writers in other processes.
    """

    write_lock: threading.RLock


def _lock_for(path: Path | str) -> threading.RLock:
    key = str(Path(path).resolve())
    with _write_locks_guard:
        return _write_locks.setdefault(key, threading.RLock())


def connect(path: Path | str, *, readonly: bool = False) -> Connection:
    """Open the store with the connection policy above.

    ``isolation_level=None`` puts the connection in autocommit so that ``atomic()`` alone
    decides where transactions begin and end (the stdlib's implicit BEGIN would nest badly).
    ``check_same_thread=False`` is safe because each thread gets its own connection (see
    ``Store``); it only lets a connection be closed from the thread that shuts down.
    """
    if readonly:
        uri = f"file:{Path(path).resolve()}?mode=ro"
        conn = sqlite3.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False, factory=Connection
        )
    else:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, factory=Connection
        )
    assert isinstance(conn, Connection)
    conn.write_lock = _lock_for(path)
    conn.row_factory = sqlite3.Row
    conn.create_function(
        identifiers.SQL_FUNCTION, 1, identifiers.split_identifiers, deterministic=True
    )
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    if not readonly:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    else:
        conn.execute("PRAGMA query_only=ON")
    return conn


@contextmanager
def atomic(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One transaction: ``BEGIN IMMEDIATE`` at the top level, a ``SAVEPOINT`` when nested.

    IMMEDIATE takes the write lock up front, so two writers queue on ``busy_timeout`` instead
    of one failing at COMMIT with SQLITE_BUSY; writers of one process first queue on the
    file's in-process lock (see ``Connection``). On failure we roll back only if the
    transaction still exists, so the original exception is never masked.
    """
    if conn.in_transaction:
        name = f"sp_{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        else:
            conn.execute(f"RELEASE SAVEPOINT {name}")
        return
    lock = getattr(conn, "write_lock", None) or threading.RLock()
    with lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")
