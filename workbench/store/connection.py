"""All SQLite connection policy lives here, plus ``atomic()``.

Pragmas (set on every connection):
- ``journal_mode=WAL``: readers (CLI, DuckDB, notebooks) never block the one writer, and a
  crash mid-write rolls back to the last commit instead of corrupting the file.
- ``synchronous=NORMAL``: in WAL mode a power loss can lose the last few commits but never
  corrupts the database; a process kill -9 loses nothing committed. SQLite is canonical here,
  so ``OFF`` (which basic-memory can afford because its markdown is canonical) is not an option.
- ``busy_timeout=10000``: a reader's checkpoint or a second connection waits instead of failing
  with "database is locked". A caller that must answer fast (the hook routes) narrows the
  wait for its own writes with ``write_wait()``; a write that cannot get the lock in time
  raises ``StoreBusy`` (a 503: the hook spools the event).
- The file's identity (device, inode) is recorded at connect; ``atomic()`` checks it before
  BEGIN and before COMMIT, so a database file deleted or replaced under a running service
  refuses writes with ``StoreGone`` instead of committing them into an unlinked inode.
- The write-ahead log and its shared-memory index (``-wal``, ``-shm``) are watched the same
  way (``companion_ids``, recorded by ``Store``): deleted under the service, SQLite keeps
  writing into the unlinked WAL, and a kill -9 then loses every commit not yet checkpointed.
  ``atomic()`` notices it before BEGIN, before COMMIT and after COMMIT, first copies what the
  unlinked WAL holds into the database file (``rescue_wal``: a FULL checkpoint through the
  connection that still has it open), then refuses writes with ``StoreGone``.
- ``foreign_keys=ON``: SQLite leaves them off by default; our rows reference sessions.

Functions (registered on every connection): ``wb_split_identifiers``, which the FTS triggers
call to index CamelCase words by their parts too (``store.identifiers``).
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from workbench.errors import StoreBusy, StoreGone, StoreUnavailable
from workbench.store import identifiers

BUSY_TIMEOUT_MS = 10_000
# Primary SQLite result codes that mean "the store cannot take this write now" (the disk,
# the lock or the file), as opposed to a bug or a bad row: SQLITE_BUSY, SQLITE_LOCKED,
# SQLITE_NOMEM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN.
STORE_FAULT_CODES = frozenset({5, 6, 7, 8, 10, 13, 14})
FileId = tuple[int, int]
_write_wait: ContextVar[float | None] = ContextVar("workbench_write_wait", default=None)
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
    db_path: str
    # (st_dev, st_ino) of the file this connection writes; None for a file that did not exist.
    file_id: FileId | None
    # The same for the ``-wal`` and ``-shm`` files beside it (empty: not watched).
    companion_ids: dict[str, FileId | None]
    busy_ms: int


def file_id(path: Path | str) -> FileId | None:
    """The (device, inode) pair naming the file at ``path`` now, or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def file_problem(path: Path | str, expected: FileId | None) -> str | None:
    """Why ``path`` is no longer the file ``expected`` names, or None when it still is."""
    if expected is None:
        return None
    current = file_id(path)
    if current == expected:
        return None
    what = "deleted" if current is None else "replaced by another file"
    return (
        f"the database file {path} was {what} while the service was running; writes are "
        "refused so nothing is lost (hooks spool their events). Restart the service "
        "(`workbench stop`, then `workbench serve --detach`) to open the file now at that path"
    )


COMPANIONS = {"-wal": "write-ahead log", "-shm": "shared-memory index"}


def companion_ids(path: Path | str) -> dict[str, FileId | None]:
    """The identities of the WAL and shared-memory files beside the database at ``path``."""
    return {suffix: file_id(f"{path}{suffix}") for suffix in COMPANIONS}


def companion_problem(path: Path | str, expected: dict[str, FileId | None]) -> str | None:
    """Why the ``-wal``/``-shm`` beside ``path`` are no longer the ones ``expected`` names."""
    for suffix, want in expected.items():
        if want is None:
            continue
        current = file_id(f"{path}{suffix}")
        if current == want:
            continue
        what = "deleted" if current is None else "replaced by another file"
        return (
            f"the database's {COMPANIONS[suffix]} {path}{suffix} was {what} while the service "
            f"was running; what it held was copied into {Path(path).name} and writes are "
            "refused so nothing is lost (hooks spool their events). Restart the service "
            "(`workbench stop`, then `workbench serve --detach`); it replays them"
        )
    return None


def rescue_wal(conn: sqlite3.Connection) -> bool:
    """Copy every commit the (unlinked) WAL holds into the database file; True when all were.

    The connection still has the deleted WAL open, so a FULL checkpoint reads it and writes
    the pages into the database file (fsynced: ``synchronous=NORMAL`` syncs after a
    checkpoint), where a restart finds them.
    """
    try:
        busy, logged, copied = conn.execute("PRAGMA wal_checkpoint(FULL)").fetchone()
    except sqlite3.Error:
        return False
    return bool(busy == 0 and copied == logged)


def is_store_fault(exc: BaseException) -> bool:
    """True for errors of the store itself (lock, disk, file), not of one row or one event."""
    if isinstance(exc, StoreUnavailable):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and (
        code is None or (code & 0xFF) in STORE_FAULT_CODES
    )


@contextmanager
def write_wait(seconds: float) -> Iterator[None]:
    """Let top-level writes in this context wait at most ``seconds`` for the write lock.

    Why: the hook routes must answer within the hook's 2 s budget; past this wait they get
    ``StoreBusy`` (503) and the hook spools, instead of the hook timing out while we wait.
    """
    token = _write_wait.set(seconds)
    try:
        yield
    finally:
        _write_wait.reset(token)


def _lock_for(path: Path | str) -> threading.RLock:
    key = str(Path(path).resolve())
    with _write_locks_guard:
        return _write_locks.setdefault(key, threading.RLock())


LOWER_FUNCTION = "wb_lower"


def unicode_lower(text: str | bytes | int | float | None) -> str | bytes | int | float | None:
    """``lower()`` for all of Unicode (SQLite's folds ASCII only; DuckDB's, like this, folds
    ``CAFÉ`` to ``café``): ``SearchFilters`` calls it only on non-ASCII text, so a filter
    means the same on the store and the team lake without a Python call per ASCII row."""
    return text.lower() if isinstance(text, str) else text


def register_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions the store's triggers and filters call (every store-shaped file:
    the store, the team mirror)."""
    conn.create_function(
        identifiers.SQL_FUNCTION, 1, identifiers.split_identifiers, deterministic=True
    )
    conn.create_function(LOWER_FUNCTION, 1, unicode_lower, deterministic=True)


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
    conn.db_path = str(path)
    conn.file_id = file_id(path)
    conn.companion_ids = {}
    conn.busy_ms = BUSY_TIMEOUT_MS
    conn.row_factory = sqlite3.Row
    register_functions(conn)
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
    wait_s = _write_wait.get()
    lock = getattr(conn, "write_lock", None) or threading.RLock()
    if not lock.acquire(timeout=-1 if wait_s is None else wait_s):
        raise StoreBusy(_busy_message(wait_s))
    try:
        _check_file(conn)
        _set_busy_timeout(conn, BUSY_TIMEOUT_MS if wait_s is None else max(1, int(wait_s * 1000)))
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", 5) & 0xFF in (5, 6):  # BUSY, LOCKED
                raise StoreBusy(_busy_message(wait_s)) from exc
            raise
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        else:
            try:
                _check_file(conn)  # deleted meanwhile: do not commit into an unlinked inode
                conn.execute("COMMIT")
            except BaseException:
                # A COMMIT that fails (disk full, I/O error) may leave the transaction open;
                # the next BEGIN on this connection would then fail forever.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            # The WAL deleted between the check and the COMMIT: this commit sits in the
            # unlinked WAL; copy it into the file before the caller acks it.
            _rescue_if_wal_gone(conn)
    finally:
        lock.release()


def _check_file(conn: sqlite3.Connection) -> None:
    path = getattr(conn, "db_path", "")
    problem = file_problem(path, getattr(conn, "file_id", None))
    if problem is not None:
        raise StoreGone(problem)
    problem = _rescue_if_wal_gone(conn)
    if problem is not None:
        raise StoreGone(problem)


def _rescue_if_wal_gone(conn: sqlite3.Connection) -> str | None:
    """The WAL problem, if any, after copying the unlinked WAL into the file (outside any
    transaction: a checkpoint cannot run inside one)."""
    problem = companion_problem(getattr(conn, "db_path", ""), getattr(conn, "companion_ids", {}))
    if problem is not None:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        rescue_wal(conn)
    return problem


def _set_busy_timeout(conn: sqlite3.Connection, ms: int) -> None:
    """Set the wait for this transaction, with one PRAGMA only when it changes.

    A plain ``sqlite3`` connection (not opened by ``connect``) keeps its own timeout unless a
    ``write_wait`` asks for a shorter one.
    """
    if isinstance(conn, Connection):
        if getattr(conn, "busy_ms", None) != ms:
            conn.execute(f"PRAGMA busy_timeout={ms}")
            conn.busy_ms = ms
    elif _write_wait.get() is not None:
        conn.execute(f"PRAGMA busy_timeout={ms}")


def _busy_message(wait_s: float | None) -> str:
    waited = f"{wait_s:g} s" if wait_s is not None else f"{BUSY_TIMEOUT_MS / 1000:g} s"
    return (
        f"the database is locked by another writer (waited {waited}); nothing was stored. "
        "Hooks spool the event and the service replays it once the lock is released; if this "
        "lasts, find the process holding workbench.db open for writing and end its transaction"
    )
