"""The team mirror: a local SQLite copy of the lake's live observations, with the FTS5 index.

Why: ``search --team`` used to scan the lake (ILIKE over the Parquet columns), linear in the
team's size (0.42 s at 100k lake rows, 2.0 s at 1M on 2 shared cores) and ranked by matched
words only. The mirror holds the same rows in ``<data>/team/mirror.sqlite``
(``Settings.team_mirror_path``) with the store's own full-text index (``observations_fts``:
``porter unicode61``, CamelCase parts through ``wb_split_identifiers``, the same column
weights), so a team search is ``recall.fts.rank`` over it (``team/mirror_read.py``), ranked
like local search. Measured on a loaded 2-core machine (bench/team.py): mirror search p50
26-75 ms at 100k-200k rows against 2.6-2.8 s for the lake scan in the same run.

**Derived.** Nothing canonical lives here: ``workbench team refresh --rebuild`` (or deleting
the file) rebuilds it from the lake. Its tables are named like the store's (``observations``,
``observations_fts``, ``sessions`` holding only ``content_session_id``/``platform_source`` for
the platform filter) so ``recall.fts`` and ``SearchFilters`` run on it unchanged.

**Refresh.** ``refresh`` brings it from the snapshot it last saw (``mirror_meta``) to the
lake's newest, with DuckLake's change feed ``ducklake_table_changes(catalog, schema, table,
from, to)`` (https://ducklake.select/docs/stable/duckdb/advanced_features/data_change_feed):
an insert adds a live row, an update's post-image with ``deleted_at_epoch`` set (a tombstone,
``publish._apply_tombstones``) or a delete removes it, keyed by ``content_hash``. One SQLite
transaction per refresh, the snapshot written with the rows: a reader sees the mirror at one
snapshot or the next, never between. It rebuilds instead when the mirror is new, points at
another lake, or the feed cannot answer (snapshots expired, the lake re-created).

**Failure.** A refresh that cannot reach the lake leaves the mirror as it was; callers serve
it and say it is stale (``Freshness.stale``). The file uses a rollback journal, not WAL: the
CLI and the service may both refresh it, and a rebuild is one transaction too.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.errors import WorkbenchError
from workbench.store.connection import register_functions
from workbench.store.identifiers import SQL_FUNCTION
from workbench.team import lake

if TYPE_CHECKING:
    from workbench.settings import Settings
    from workbench.team.read import Reader

FORMAT = "2"  # bump when the tables below change: an older mirror is rebuilt
FTS_COLUMNS = ("title", "subtitle", "narrative", "facts", "concepts")
COLUMNS = (
    "content_hash", "author", "local_id", "content_session_id", "project", "platform_source",
    "prompt_number", "type", "title", "subtitle", "narrative", "facts", "concepts",
    "files_read", "files_modified", "discovery_tokens", "created_at", "created_at_epoch",
    "generated_by",
)  # fmt: skip
LISTS = ("facts", "concepts", "files_read", "files_modified")
_BATCH = 5000


def _split(prefix: str, column: str) -> str:
    return f"{SQL_FUNCTION}({prefix}.{column})"


_FTS = ", ".join(FTS_COLUMNS)
SCHEMA = f"""
CREATE TABLE observations (
    id INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL UNIQUE,
    author TEXT NOT NULL,
    local_id INTEGER NOT NULL,
    content_session_id TEXT,
    project TEXT NOT NULL,
    platform_source TEXT NOT NULL,
    prompt_number INTEGER NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    subtitle TEXT NOT NULL,
    narrative TEXT NOT NULL,
    facts TEXT NOT NULL,
    concepts TEXT NOT NULL,
    files_read TEXT NOT NULL,
    files_modified TEXT NOT NULL,
    discovery_tokens INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL,
    generated_by TEXT NOT NULL
);
CREATE INDEX observations_author_local ON observations (author, local_id);
CREATE INDEX observations_created ON observations (created_at_epoch);
CREATE TABLE sessions (
    content_session_id TEXT NOT NULL,
    platform_source TEXT NOT NULL,
    PRIMARY KEY (content_session_id, platform_source)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE observations_fts USING fts5 (
    {_FTS}, content='', tokenize='porter unicode61'
);
"""
# Rows are indexed in one statement after each bulk insert (``_index_new``: several times
# faster than a trigger per row, as bench/analytics.py measured for the store); only deletes
# go through a trigger, which hands FTS5 the old values a contentless index needs.
TRIGGERS = f"""
CREATE TRIGGER observations_fts_ad AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts (observations_fts, rowid, {_FTS})
    VALUES ('delete', old.id, {", ".join(_split("old", c) for c in FTS_COLUMNS)});
END;
"""
TABLES = ("observations", "sessions", "observations_fts")


class MirrorUnavailable(WorkbenchError):
    """No mirror yet and the lake cannot be read to make one."""

    status_code = 503
    code = "TEAM_MIRROR_UNAVAILABLE"


@dataclass
class Freshness:
    """Which snapshot the mirror serves, and why it may be behind the lake."""

    snapshot: int
    mode: str  # "recent" (not asked) | "current" | "incremental" | "rebuild" | "stale"
    added: int = 0
    removed: int = 0
    stale: str | None = None  # the lake's error when the last mirror is served as it was

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot": self.snapshot,
            "mode": self.mode,
            "added": self.added,
            "removed": self.removed,
            "stale": self.stale,
        }


def connect(settings: Settings) -> sqlite3.Connection:
    """The mirror file (made when missing), the store's SQL functions registered."""
    path = settings.team_mirror_path
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")  # see the module doc: no WAL for this file
        # A colleague's forgotten row must not linger in freed pages (see ``_purge_terms``).
        conn.execute("PRAGMA secure_delete=ON")
        register_functions(conn)
        conn.execute("CREATE TABLE IF NOT EXISTS mirror_meta (key TEXT PRIMARY KEY, value TEXT)")
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def opened(settings: Settings) -> Iterator[sqlite3.Connection]:
    conn = connect(settings)
    try:
        yield conn
    finally:
        conn.close()


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM mirror_meta").fetchall())


def identity(settings: Settings) -> str:
    """Which lake a mirror copies: another catalog or data path means a rebuild."""
    return json.dumps([FORMAT, settings.team_catalog, settings.team_data])


def snapshot_of(conn: sqlite3.Connection, settings: Settings) -> int | None:
    """The snapshot the mirror holds, or None when it holds none of this lake."""
    meta = _meta(conn)
    if meta.get("identity") != identity(settings) or "snapshot" not in meta:
        return None
    return int(meta["snapshot"])


def refresh(
    settings: Settings, *, rebuild: bool = False, max_age_s: float | None = None
) -> Freshness:
    """Bring the mirror to the lake's newest snapshot; serve the last one if the lake fails.

    ``max_age_s``: when the mirror last heard from the lake less than this many seconds ago,
    the lake is not asked at all (mode ``recent``): readers pass
    ``team_mirror_max_age_s``, ``team refresh`` passes nothing.

    Raises ``TeamNotConfigured`` when no lake is set, and ``MirrorUnavailable`` when the lake
    cannot be read and there is no mirror of it yet (or the mirror is locked past the busy
    timeout by another process's rebuild).
    """
    lake.require_configured(settings)
    try:
        return _refresh(settings, rebuild=rebuild, max_age_s=max_age_s)
    except sqlite3.OperationalError as exc:
        raise MirrorUnavailable(
            f"the team mirror at {settings.team_mirror_path} cannot be used now ({exc}); "
            "another process may be rebuilding it: try again in a minute"
        ) from None


def _refresh(settings: Settings, *, rebuild: bool, max_age_s: float | None) -> Freshness:
    import duckdb

    from workbench.team import read

    with opened(settings) as conn:
        held = snapshot_of(conn, settings)
        if held is not None and not rebuild and max_age_s:
            checked = float(_meta(conn).get("checked_at") or 0)
            if 0 <= time.time() - checked < max_age_s:
                return Freshness(snapshot=held, mode="recent")
        try:
            r = read.reader(settings)
        except lake.LakeUnavailable as exc:
            if held is None:
                raise MirrorUnavailable(
                    f"no team mirror yet and the lake cannot be read: {exc.message}"
                ) from None
            return Freshness(snapshot=held, mode="stale", stale=exc.message)
        try:
            return _bring_up(conn, settings, r, held, rebuild=rebuild)
        except duckdb.Error as exc:
            # Trigger: the catalog answered but the data path failed (share unmounted, S3
            #   down) while the rows were read; ``_bring_up`` rolled the mirror back.
            # Why: a storage error is the lake being unavailable, not a bug: never a 500.
            # Outcome: the mirror as it was, said to be stale; none yet is a clear 503.
            error = lake.storage_error(settings.team_data or "", exc)
            if held is None:
                raise MirrorUnavailable(
                    f"no team mirror yet and the lake cannot be read: {error.message}"
                ) from None
            return Freshness(snapshot=held, mode="stale", stale=error.message)
        finally:
            r.close()


def _bring_up(
    conn: sqlite3.Connection, settings: Settings, r: Reader, held: int | None, *, rebuild: bool
) -> Freshness:
    import duckdb

    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        # Trigger: another process holds the mirror's write lock past the busy timeout.
        # Why: it is refreshing (a rebuild of a large lake takes a while); waiting longer
        #   would stall a search behind it.
        # Outcome: the mirror as it is, said to be behind; none yet is a 503 to retry.
        busy = "another process is refreshing the team mirror"
        if held is None:
            raise MirrorUnavailable(f"{busy}; try again in a minute") from None
        return Freshness(snapshot=held, mode="stale", stale=busy)
    try:
        # Another process may have refreshed while this one opened the lake.
        held = snapshot_of(conn, settings)
        result: Freshness | None = None
        if not rebuild and held == r.snapshot:
            result = Freshness(snapshot=held, mode="current")
        elif not rebuild and held is not None and held < r.snapshot:
            try:
                result = _apply_changes(conn, r, held)
            except duckdb.Error:
                result = None  # the feed cannot answer (expired snapshots…): rebuild
        if result is None:
            result = _rebuild(conn, r)
        conn.executemany(
            "INSERT OR REPLACE INTO mirror_meta VALUES (?, ?)",
            [
                ("identity", identity(settings)),
                ("snapshot", str(r.snapshot)),
                ("checked_at", repr(time.time())),
            ],
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return result


def _select(source: str) -> str:
    cols = ", ".join(f"CAST(to_json({c}) AS VARCHAR)" if c in LISTS else c for c in COLUMNS)
    return f"SELECT {cols} FROM {source}"


def _insert(conn: sqlite3.Connection, cursor: Any) -> int:
    marks = ", ".join("?" * len(COLUMNS))
    sql = f"INSERT OR IGNORE INTO observations ({', '.join(COLUMNS)}) VALUES ({marks})"
    count = 0
    while rows := cursor.fetchmany(_BATCH):
        count += conn.executemany(sql, rows).rowcount  # the rows' own, not the triggers'
    return count


def _rebuild(conn: sqlite3.Connection, r: Reader) -> Freshness:
    for name in TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {name}")
    for statement in _statements(SCHEMA):
        conn.execute(statement)
    source = f"{r.table('observations')} WHERE deleted_at_epoch IS NULL"
    # Inserted in created order: rowid order is time order, which the FTS tiers read as
    # "newest" (recall/fts.py, bounded ranking).
    cursor = r.con.execute(_select(source) + " ORDER BY created_at_epoch, author, local_id")
    added = _insert(conn, cursor)
    _index_new(conn, 0)
    for statement in _statements(TRIGGERS):
        conn.execute(statement)
    return Freshness(snapshot=r.snapshot, mode="rebuild", added=added)


def _index_new(conn: sqlite3.Connection, base: int) -> None:
    """Index the rows inserted after id ``base`` (new ids are above every id left)."""
    split = ", ".join(f"{SQL_FUNCTION}({c})" for c in FTS_COLUMNS)
    conn.execute(
        f"INSERT INTO observations_fts (rowid, {_FTS}) SELECT id, {split} FROM observations "
        "WHERE id > ?",
        [base],
    )
    conn.execute(
        "INSERT OR IGNORE INTO sessions SELECT DISTINCT coalesce(content_session_id, ''), "
        "platform_source FROM observations WHERE id > ?",
        [base],
    )


def _apply_changes(conn: sqlite3.Connection, r: Reader, held: int) -> Freshness:
    """The lake's changes after ``held`` up to the reader's snapshot, applied in order."""
    changes = (
        f"ducklake_table_changes('{lake.LAKE}', 'main', 'observations', {held + 1}, "
        f"{int(r.snapshot)})"
    )
    # The last change of each row wins; an update's pre-image says nothing new.
    latest = (
        f"SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY content_hash ORDER BY "
        f"snapshot_id DESC, change_type = 'insert' DESC) AS rn FROM {changes} "
        "WHERE change_type <> 'update_preimage') WHERE rn = 1"
    )
    gone = r.con.execute(
        f"SELECT content_hash FROM ({latest}) WHERE change_type = 'delete' "
        "OR deleted_at_epoch IS NOT NULL"
    ).fetchall()
    removed = 0
    for start in range(0, len(gone), _BATCH):
        chunk = [h for (h,) in gone[start : start + _BATCH]]
        removed += conn.execute(
            f"DELETE FROM observations WHERE content_hash IN ({','.join('?' * len(chunk))})",
            chunk,
        ).rowcount
    cursor = r.con.execute(
        _select(f"({latest}) WHERE change_type <> 'delete' AND deleted_at_epoch IS NULL")
        + " ORDER BY created_at_epoch, author, local_id"
    )
    base = conn.execute("SELECT coalesce(max(id), 0) FROM observations").fetchone()[0]
    added = _insert(conn, cursor)
    _index_new(conn, base)
    if removed:
        _purge_terms(conn)
    return Freshness(snapshot=r.snapshot, mode="incremental", added=added, removed=removed)


def _purge_terms(conn: sqlite3.Connection) -> None:
    """Merge the full-text index so removed rows' terms leave the file.

    Why: a delete from FTS5 only adds a delete marker; the terms stay in the older index
    segments until they are merged, and a colleague's forgotten words would stay readable in
    ``mirror.sqlite`` (the store's ``deletions.purge`` does the same for local forgets).
    ``secure_delete`` (``connect``) zeroes the pages the merge and the row deletes free.
    """
    conn.execute("INSERT INTO observations_fts (observations_fts) VALUES ('optimize')")


def _statements(script: str) -> Iterator[str]:
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer
            buffer = ""
