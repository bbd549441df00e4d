"""``Store``: one database file, migrated on open, one connection per thread.

SQLite connections must not be shared across threads mid-transaction, and opening one costs
a few hundred microseconds; a thread-local cache gives each request thread and the worker its
own long-lived connection. A thread's connection is closed when the thread ends: the
service's routes run on anyio's worker threads, which anyio stops after 10 s idle and starts
anew for the next burst, and a store that kept them all open leaked a few descriptors and
megabytes per burst for the service's life. ``close()`` closes every connection still open.

A writable store remembers which file it opened (device and inode). If that file is deleted
or replaced while the store is open, ``problem()`` says so, no new connection is opened onto
whatever now sits at the path, and every write is refused (``StoreGone``, see
``connection.atomic``). The same holds for its ``-wal`` and ``-shm`` files (recorded once
the store is open and migrated: the first read creates them), whose loss would otherwise drop
every commit not yet checkpointed at the next kill -9.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from pathlib import Path

from workbench.errors import StoreGone
from workbench.store import fts_rebuild, schema
from workbench.store.connection import (
    Connection,
    FileId,
    companion_ids,
    companion_problem,
    connect,
    file_problem,
)


class _ThreadConnection:
    """What a thread's local slot holds: its connection, closed when the slot is dropped (the
    thread ended, or the store was closed) rather than whenever the collector gets to it."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __del__(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass


class Store:
    """The canonical SQLite store at ``path``."""

    def __init__(self, path: Path | str, *, readonly: bool = False, migrate: bool = True) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._local = threading.local()
        # Every connection still open (a thread's slot holds the only strong reference).
        self._all: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self.file_id: FileId | None = None
        self.companion_ids: dict[str, FileId | None] = {}
        if readonly and not self.path.exists():
            raise FileNotFoundError(
                f"no workbench database at {self.path}; start the service once "
                "(workbench serve) or point WORKBENCH_DATA_DIR at your data dir"
            )
        try:
            if not readonly:
                self.file_id = getattr(self.conn, "file_id", None)
            if readonly:
                schema.check_not_newer(self.conn, str(self.path))
            elif migrate:
                schema.apply(self.conn, str(self.path))
                fts_rebuild.abandon(self.conn)  # scraps of a reindex a kill -9 cut short
            if not readonly:
                self.companion_ids = companion_ids(self.path)
                first = self.conn
                if isinstance(first, Connection):
                    first.companion_ids = self.companion_ids
        except BaseException:
            self.close()  # a refused open (SchemaTooNew…) must not leak its connection
            raise

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        held: _ThreadConnection | None = getattr(self._local, "held", None)
        if held is not None:
            return held.conn
        problem = self.problem()
        if problem is not None:
            raise StoreGone(problem)
        opened = connect(self.path, readonly=self.readonly)
        if self.file_id is not None:
            opened.file_id = self.file_id  # the file we migrated, not whatever is there now
            opened.companion_ids = self.companion_ids
        self._local.held = _ThreadConnection(opened)
        with self._lock:
            self._all.add(opened)
        return opened

    def problem(self) -> str | None:
        """Why this store can no longer write its file (it, its WAL or its shared-memory
        index deleted or replaced), else None."""
        if self.readonly:
            return None
        return file_problem(self.path, self.file_id) or companion_problem(
            self.path, self.companion_ids
        )

    def close(self) -> None:
        with self._lock:
            for conn in list(self._all):
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
