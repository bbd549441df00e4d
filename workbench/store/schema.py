"""Numbered migrations. Each one and its record commit in one transaction.

- Register a migration with ``@migration``; order follows registration, not names.
- ``pending()`` only reads. ``apply()`` runs each pending migration *and* inserts its row into
  ``_migrations`` inside one ``BEGIN IMMEDIATE`` transaction, so a crash leaves it pending,
  never half-applied, and two processes starting at once apply it exactly once.
- A database whose ``_migrations`` names something this code does not know was written by a
  newer version: ``apply()`` refuses it (``SchemaTooNew``) without touching the file.

SQL is run statement by statement (``sqlite3.complete_statement``) because ``executescript``
commits on its own and would break the one-transaction rule.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from workbench.errors import SchemaTooNew
from workbench.store.connection import atomic
from workbench.store.identifiers import SQL_FUNCTION as SPLIT_FUNCTION

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration under its function name."""
    name = fn.__name__
    if any(existing == name for existing, _ in MIGRATIONS):
        raise ValueError(f"migration {name!r} is registered twice in workbench.store.schema")
    MIGRATIONS.append((name, fn))
    return fn


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute a multi-statement script inside the caller's transaction."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement at end of script: {buffer.strip()[:80]!r}")


def _ensure_table(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )


def applied(conn: sqlite3.Connection) -> list[str]:
    """Names recorded in ``_migrations``, in the order they were applied."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='_migrations'"
    ).fetchone()
    if not exists:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]


def pending(conn: sqlite3.Connection) -> list[str]:
    """Names of registered migrations not yet applied. Read-only."""
    done = set(applied(conn))
    return [name for name, _ in MIGRATIONS if name not in done]


def schema_version(conn: sqlite3.Connection) -> int:
    """How many migrations the database has (``/api/health`` reports it)."""
    return len(applied(conn))


def check_not_newer(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a database that records migrations this code does not know."""
    known = {name for name, _ in MIGRATIONS}
    unknown = [name for name in applied(conn) if name not in known]
    if unknown:
        raise SchemaTooNew(path, unknown)


def apply(conn: sqlite3.Connection, path: str = "") -> list[str]:
    """Apply every pending migration; return the names applied now."""
    check_not_newer(conn, path)
    _ensure_table(conn)
    done_now: list[str] = []
    for name, fn in MIGRATIONS:
        with atomic(conn):
            # Re-check inside the write lock: another process may have just applied it.
            if conn.execute("SELECT 1 FROM _migrations WHERE name=?", (name,)).fetchone():
                continue
            fn(conn)
            conn.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat(timespec="seconds")),
            )
            done_now.append(name)
    return done_now


# ----------------------------------------------------------------------------------------------
# The migrations. Never edit one that has shipped: add the next number.
# ----------------------------------------------------------------------------------------------
_JSON_ARRAY = "TEXT NOT NULL DEFAULT '[]' CHECK (json_valid({col}) AND json_type({col}) = 'array')"


def _json_array(col: str) -> str:
    return f"{col} " + _JSON_ARRAY.format(col=col)


@migration
def m001_initial(conn: sqlite3.Connection) -> None:
    """Sessions, prompts, the append-only events log and its queue, observations, summaries."""
    run_script(
        conn,
        f"""
        CREATE TABLE IF NOT EXISTS sessions (
            id INTEGER PRIMARY KEY,
            content_session_id TEXT NOT NULL UNIQUE,
            project TEXT NOT NULL,
            platform_source TEXT NOT NULL DEFAULT 'claude-code',
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'completed', 'failed')),
            started_at TEXT NOT NULL,
            started_at_epoch INTEGER NOT NULL,
            completed_at TEXT,
            completed_at_epoch INTEGER,
            prompt_counter INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX IF NOT EXISTS sessions_project_started
            ON sessions (project, started_at_epoch DESC);

        CREATE TABLE IF NOT EXISTS user_prompts (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            content_session_id TEXT NOT NULL,
            project TEXT NOT NULL,
            prompt_number INTEGER NOT NULL,
            prompt_text TEXT NOT NULL CHECK (length(prompt_text) <= 4000),
            created_at TEXT NOT NULL,
            created_at_epoch INTEGER NOT NULL,
            UNIQUE (content_session_id, prompt_number)
        );
        CREATE INDEX IF NOT EXISTS user_prompts_project_created
            ON user_prompts (project, created_at_epoch DESC);
        CREATE INDEX IF NOT EXISTS user_prompts_created ON user_prompts (created_at_epoch DESC);

        CREATE TABLE IF NOT EXISTS events (
            id INTEGER PRIMARY KEY,
            event_key TEXT UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN
                ('session_init', 'observation', 'summarize', 'session_end', 'memory_save')),
            content_session_id TEXT,
            project TEXT,
            prompt_number INTEGER NOT NULL DEFAULT 0,
            payload TEXT NOT NULL CHECK (json_valid(payload)),
            received_at TEXT NOT NULL,
            received_at_epoch INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS events_session ON events (content_session_id, id);
        CREATE INDEX IF NOT EXISTS events_kind_received ON events (kind, received_at_epoch);
        CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
        BEGIN
            SELECT RAISE(ABORT, 'events are append-only: the log is the canonical record');
        END;
        CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
        BEGIN
            SELECT RAISE(ABORT, 'events are append-only: the log is the canonical record');
        END;

        CREATE TABLE IF NOT EXISTS queue (
            event_id INTEGER PRIMARY KEY REFERENCES events (id),
            status TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL DEFAULT 0,
            claimed_at INTEGER,
            claimed_by TEXT,
            last_error TEXT,
            updated_at INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS queue_ready ON queue (status, next_attempt_at, event_id);

        CREATE TABLE IF NOT EXISTS observations (
            id INTEGER PRIMARY KEY,
            session_id INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
            content_session_id TEXT,
            event_id INTEGER REFERENCES events (id),
            project TEXT NOT NULL,
            prompt_number INTEGER NOT NULL DEFAULT 0,
            type TEXT NOT NULL,
            title TEXT NOT NULL,
            subtitle TEXT NOT NULL DEFAULT '',
            narrative TEXT NOT NULL DEFAULT '',
            {_json_array("facts")},
            {_json_array("concepts")},
            {_json_array("files_read")},
            {_json_array("files_modified")},
            discovery_tokens INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_at_epoch INTEGER NOT NULL,
            content_hash TEXT NOT NULL UNIQUE,
            generated_by TEXT NOT NULL DEFAULT 'offline',
            agent_id TEXT,
            agent_type TEXT
        );
        CREATE INDEX IF NOT EXISTS observations_project_created
            ON observations (project, created_at_epoch DESC);
        CREATE INDEX IF NOT EXISTS observations_created ON observations (created_at_epoch DESC);
        CREATE INDEX IF NOT EXISTS observations_event ON observations (event_id);
        CREATE INDEX IF NOT EXISTS observations_session
            ON observations (content_session_id, prompt_number);

        CREATE TABLE IF NOT EXISTS session_summaries (
            id INTEGER PRIMARY KEY,
            session_id INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
            content_session_id TEXT NOT NULL,
            event_id INTEGER REFERENCES events (id),
            project TEXT NOT NULL,
            prompt_number INTEGER NOT NULL DEFAULT 0,
            request TEXT NOT NULL DEFAULT '',
            investigated TEXT NOT NULL DEFAULT '',
            learned TEXT NOT NULL DEFAULT '',
            completed TEXT NOT NULL DEFAULT '',
            next_steps TEXT NOT NULL DEFAULT '',
            notes TEXT NOT NULL DEFAULT '',
            {_json_array("files_read")},
            {_json_array("files_edited")},
            discovery_tokens INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_at_epoch INTEGER NOT NULL,
            generated_by TEXT NOT NULL DEFAULT 'offline',
            UNIQUE (content_session_id, prompt_number)
        );
        CREATE INDEX IF NOT EXISTS summaries_project_created
            ON session_summaries (project, created_at_epoch DESC);
        CREATE INDEX IF NOT EXISTS summaries_created ON session_summaries (created_at_epoch DESC);
        """,
    )


def _fts_triggers(table: str, fts: str, columns: list[str]) -> str:
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    return f"""
        CREATE TRIGGER IF NOT EXISTS {fts}_ai AFTER INSERT ON {table} BEGIN
            INSERT INTO {fts} (rowid, {cols}) VALUES (new.id, {new});
        END;
        CREATE TRIGGER IF NOT EXISTS {fts}_ad AFTER DELETE ON {table} BEGIN
            INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES ('delete', old.id, {old});
        END;
        CREATE TRIGGER IF NOT EXISTS {fts}_au AFTER UPDATE ON {table} BEGIN
            INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES ('delete', old.id, {old});
            INSERT INTO {fts} (rowid, {cols}) VALUES (new.id, {new});
        END;
    """


FTS_TABLES: dict[str, tuple[str, list[str]]] = {
    "observations_fts": ("observations", ["title", "subtitle", "narrative", "facts", "concepts"]),
    "summaries_fts": (
        "session_summaries",
        ["request", "investigated", "learned", "completed", "next_steps", "notes"],
    ),
    "prompts_fts": ("user_prompts", ["prompt_text"]),
}


@migration
def m002_fts(conn: sqlite3.Connection) -> None:
    """FTS5 external-content indexes (porter-stemmed) kept in sync by triggers.

    Porter stemming: natural-language questions recall far better stemmed (see issue 3's
    measurements). External content keeps one copy of the text, in the canonical table.
    """
    for fts, (table, columns) in FTS_TABLES.items():
        run_script(
            conn,
            f"""
            CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5 (
                {", ".join(columns)},
                content='{table}', content_rowid='id', tokenize='porter unicode61'
            );
            {_fts_triggers(table, fts, columns)}
            """,
        )
        conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")


@migration
def m003_embeddings(conn: sqlite3.Connection) -> None:
    """Embedding cache keyed by (model, hash of the embedded text): derived, rebuildable.

    Keyed by the text's hash, not the observation id, so re-indexing unchanged content costs
    zero model calls and two observations with the same text share one vector. Vectors are
    little-endian float32 blobs.
    """
    run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS embeddings (
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL CHECK (length(vector) = dim * 4),
            created_at_epoch INTEGER NOT NULL,
            PRIMARY KEY (model, text_hash)
        ) WITHOUT ROWID;
        """,
    )


@migration
def m004_injection_ledger(conn: sqlite3.Connection) -> None:
    """The injection ledger: what context was injected where, and what was fetched later.

    Lets analytics show each memory's return on investment: what it cost to create
    (discovery_tokens), how often it was injected, and whether the agent then asked for it.
    """
    run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS injections (
            id INTEGER PRIMARY KEY,
            content_session_id TEXT,
            project TEXT,
            kind TEXT NOT NULL CHECK (kind IN ('session_start', 'prompt', 'file', 'other')),
            tokens INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_at_epoch INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS injections_session ON injections (content_session_id);
        CREATE INDEX IF NOT EXISTS injections_created ON injections (created_at_epoch);

        CREATE TABLE IF NOT EXISTS injection_items (
            injection_id INTEGER NOT NULL REFERENCES injections (id) ON DELETE CASCADE,
            observation_id INTEGER NOT NULL,
            shown TEXT NOT NULL DEFAULT 'index' CHECK (shown IN ('index', 'full', 'file')),
            PRIMARY KEY (injection_id, observation_id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS injection_items_observation
            ON injection_items (observation_id);

        CREATE TABLE IF NOT EXISTS fetches (
            id INTEGER PRIMARY KEY,
            content_session_id TEXT,
            observation_id INTEGER NOT NULL,
            source TEXT NOT NULL DEFAULT 'http',
            created_at TEXT NOT NULL,
            created_at_epoch INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS fetches_observation ON fetches (observation_id);
        """,
    )


@migration
def m005_deleted_observations(conn: sqlite3.Connection) -> None:
    """Tombstones of observations a person deleted, so re-deriving never brings them back.

    The events log is append-only and canonical, so a deleted observation can always be
    derived again from its event (``recompress``, or a worker retry). ``derive`` skips a
    result whose content hash is tombstoned. Only the hash and ids are kept, never the text:
    a memory deleted because it was wrong or sensitive must not survive here in clear.
    """
    run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS deleted_observations (
            content_hash TEXT PRIMARY KEY,
            observation_id INTEGER NOT NULL,
            event_id INTEGER,
            content_session_id TEXT,
            project TEXT,
            deleted_at TEXT NOT NULL,
            deleted_at_epoch INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS deleted_observations_id
            ON deleted_observations (observation_id);
        """,
    )


_FILE_ROWS = """
            SELECT value, {row}.id, 0 FROM json_each({row}.files_read)
            UNION SELECT value, {row}.id, 1 FROM json_each({row}.files_modified)
"""


@migration
def m006_observation_files(conn: sqlite3.Connection) -> None:
    """One row per (path, observation, read|modified): derived, kept in sync by triggers.

    File paths otherwise live only inside JSON text, so "what do we know about this file"
    (file history before a Read, the ``files`` search filter) was a full table scan that grew
    with history: 62 ms at 100k observations, against ~2 ms with this index.
    """
    new_rows = _FILE_ROWS.format(row="new")
    run_script(
        conn,
        f"""
        CREATE TABLE IF NOT EXISTS observation_files (
            path TEXT NOT NULL,
            observation_id INTEGER NOT NULL,
            modified INTEGER NOT NULL CHECK (modified IN (0, 1)),
            PRIMARY KEY (path, observation_id, modified)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS observation_files_observation
            ON observation_files (observation_id);
        CREATE TRIGGER IF NOT EXISTS observation_files_ai AFTER INSERT ON observations BEGIN
            INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
            {new_rows};
        END;
        CREATE TRIGGER IF NOT EXISTS observation_files_ad AFTER DELETE ON observations BEGIN
            DELETE FROM observation_files WHERE observation_id = old.id;
        END;
        CREATE TRIGGER IF NOT EXISTS observation_files_au
        AFTER UPDATE OF files_read, files_modified ON observations BEGIN
            DELETE FROM observation_files WHERE observation_id = old.id;
            INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
            {new_rows};
        END;
        INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
            SELECT value, o.id, 0 FROM observations o, json_each(o.files_read)
            UNION SELECT value, o.id, 1 FROM observations o, json_each(o.files_modified);
        """,
    )


_EVENT_KINDS_BEFORE_SCRUB = "'memory_save')"
_EVENT_KINDS_WITH_SCRUB = "'memory_save', 'scrub')"
# Every column but ``payload`` must stay as it was for the one sanctioned update (see m007).
_EVENT_IDENTITY = " AND ".join(
    f"new.{c} IS old.{c}"
    for c in (
        "id",
        "event_key",
        "kind",
        "content_session_id",
        "project",
        "prompt_number",
        "received_at",
        "received_at_epoch",
    )
)


@migration
def m007_event_scrub(conn: sqlite3.Connection) -> None:
    """Forgetting for real: a ``scrub`` event kind, the one update the log allows, tombstones
    keyed on the source.

    - ``events.kind`` also accepts ``'scrub'``: the log records each scrub itself, payload
      ``{"event_id", "sha256", "observation_ids", "reason"}``. SQLite cannot alter a CHECK,
      and rebuilding the log would copy every payload; widening an ``IN`` list changes no
      stored row, so the table's SQL is edited in place, as SQLite documents for constraint
      changes (``writable_schema`` + ``schema_version`` bump, in this transaction).
    - ``events_append_only_update`` now lets exactly one update through: an event's payload
      replaced by ``{"scrubbed": <sha256>}`` when a ``scrub`` event names that event and that
      hash, every other column unchanged, and never on a ``scrub`` event. Deletes stay
      refused. ``workbench.store.events.scrub`` is the one function that does it.
    - ``events_scrubbed``: scrub records by the event they scrubbed (recompress skips those).
    - ``deleted_observations`` gains the observation's own ``prompt_number`` and
      ``created_at_epoch``, so an import of an older export (whose wording, hence hash, may
      differ) is matched on where the memory came from, not only on its text.
    """
    (table_sql,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'"
    ).fetchone()
    if _EVENT_KINDS_WITH_SCRUB not in table_sql:
        if table_sql.count(_EVENT_KINDS_BEFORE_SCRUB) != 1:
            raise RuntimeError(
                "m007_event_scrub: the events table's kind CHECK is not the one m001 created; "
                "restore the database from a backup or export/import it into a fresh data dir"
            )
        (version,) = conn.execute("PRAGMA schema_version").fetchone()
        conn.execute("PRAGMA writable_schema = ON")
        try:
            conn.execute(
                "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'events'",
                (table_sql.replace(_EVENT_KINDS_BEFORE_SCRUB, _EVENT_KINDS_WITH_SCRUB),),
            )
            conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
        finally:
            conn.execute("PRAGMA writable_schema = OFF")
    run_script(
        conn,
        f"""
        DROP TRIGGER IF EXISTS events_append_only_update;
        CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        WHEN NOT (
            {_EVENT_IDENTITY}
            AND old.kind <> 'scrub'
            AND EXISTS (
                SELECT 1 FROM events s
                WHERE s.kind = 'scrub'
                    AND json_extract(s.payload, '$.event_id') = old.id
                    AND new.payload = json_object('scrubbed', json_extract(s.payload, '$.sha256'))
            )
        )
        BEGIN
            SELECT RAISE(ABORT, 'events are append-only: the log is the canonical record');
        END;
        CREATE INDEX IF NOT EXISTS events_scrubbed
            ON events (json_extract(payload, '$.event_id')) WHERE kind = 'scrub';
        """,
    )
    columns = {r[1] for r in conn.execute("PRAGMA table_info(deleted_observations)")}
    for column in ("prompt_number", "created_at_epoch"):
        if column not in columns:
            conn.execute(f"ALTER TABLE deleted_observations ADD COLUMN {column} INTEGER")
    run_script(
        conn,
        """
        CREATE INDEX IF NOT EXISTS deleted_observations_event
            ON deleted_observations (event_id);
        CREATE INDEX IF NOT EXISTS deleted_observations_origin
            ON deleted_observations (content_session_id, created_at_epoch);
        """,
    )


def _split(row: str, column: str) -> str:
    return f"{SPLIT_FUNCTION}({row}.{column})"


def split_fts_triggers(table: str, fts: str, columns: list[str], *, upto: str = "") -> str:
    """Triggers that index each column through ``wb_split_identifiers`` (see m008).

    ``upto``: an SQL expression; when given, the triggers act only on rows whose id is at most
    its value (``store/fts_rebuild.py`` keeps a half-built index in step this way).
    """
    cols = ", ".join(columns)
    new = ", ".join(_split("new", c) for c in columns)
    old = ", ".join(_split("old", c) for c in columns)
    when_new = f"WHEN new.id <= ({upto}) " if upto else ""
    when_old = f"WHEN old.id <= ({upto}) " if upto else ""
    return f"""
        CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} {when_new}BEGIN
            INSERT INTO {fts} (rowid, {cols}) VALUES (new.id, {new});
        END;
        CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} {when_old}BEGIN
            INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES ('delete', old.id, {old});
        END;
        CREATE TRIGGER {fts}_au AFTER UPDATE OF {cols} ON {table} {when_old}BEGIN
            INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES ('delete', old.id, {old});
            INSERT INTO {fts} (rowid, {cols}) VALUES (new.id, {new});
        END;
    """


def rebuild_fts(conn: sqlite3.Connection, only: str | None = None) -> None:
    """Re-index the FTS tables (or ``only`` one) from the canonical tables.

    The FTS tables are contentless since m008, so FTS5's own ``'rebuild'`` (which re-reads an
    external content table) does not apply: empty the index, then index every row through
    ``wb_split_identifiers`` exactly as the insert trigger does. Run it inside ``atomic()``:
    it holds the write lock throughout (migrations). ``store/fts_rebuild.py`` rebuilds in
    short transactions instead, for ``workbench reindex`` on a live service.
    """
    for fts, (table, columns) in FTS_TABLES.items():
        if only is not None and fts != only:
            continue
        conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('delete-all')")
        conn.execute(fts_fill(fts, table, columns))


def fts_fill(target: str, table: str, columns: list[str]) -> str:
    """``INSERT … SELECT`` indexing ``table``'s rows into ``target`` as the insert trigger
    does (a ``WHERE`` may be appended: ``store/fts_rebuild.py`` fills by id range)."""
    cols = ", ".join(columns)
    split = ", ".join(f"{SPLIT_FUNCTION}({c})" for c in columns)
    return f"INSERT INTO {target} (rowid, {cols}) SELECT id, {split} FROM {table}"


@migration
def m008_fts_code_identifiers(conn: sqlite3.Connection) -> None:
    """Full text that knows code: CamelCase words indexed whole and by their parts.

    ``ReviewBuildWorker`` was one token, so "build worker" could not find it (snake_case,
    kebab-case and paths were already cut by the tokenizer). The triggers now index each
    column through ``wb_split_identifiers`` (``store.identifiers``; registered on every
    connection by ``store.connection.connect``), which appends a CamelCase word's parts after it.

    The FTS tables become contentless (``content=''``): what is indexed is no longer the
    canonical text itself, so FTS5 must not read it back from the canonical table ('rebuild',
    'integrity-check' against content). Rows leave the index by the ``'delete'`` command with
    the same expanded values, which the delete and update triggers compute. ``rebuild_fts``
    replaces FTS5's 'rebuild'. Nothing canonical changes; the index is rebuilt from the
    canonical tables here, in this migration's transaction.
    """
    for fts, (table, columns) in FTS_TABLES.items():
        run_script(
            conn,
            f"""
            DROP TRIGGER IF EXISTS {fts}_ai;
            DROP TRIGGER IF EXISTS {fts}_ad;
            DROP TRIGGER IF EXISTS {fts}_au;
            DROP TABLE IF EXISTS {fts};
            CREATE VIRTUAL TABLE {fts} USING fts5 (
                {", ".join(columns)},
                content='', tokenize='porter unicode61'
            );
            {split_fts_triggers(table, fts, columns)}
            """,
        )
        rebuild_fts(conn, only=fts)


@migration
def m009_rerank_cache(conn: sqlite3.Connection) -> None:
    """Claude listwise rerank answers (``recall/rerank_llm.py``): a repeated search is free.

    Derived: ``key`` hashes the model, the query and the candidate ids in order; ``ranked`` is
    the ids as Claude ordered them; ``tokens`` what that answer cost. Deleting rows only costs
    a new request.
    """
    run_script(
        conn,
        f"""
        CREATE TABLE IF NOT EXISTS rerank_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            {_json_array("ranked")},
            tokens INTEGER NOT NULL DEFAULT 0,
            created_at_epoch INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
    )


@migration
def m010_observation_platform(conn: sqlite3.Connection) -> None:
    """``observations.platform_source``: which agent (``claude-code``, ``gemini-cli``…) saw it.

    Copied from the observation's session when it is stored (``observations.insert``), so
    filters and ``stats`` by platform need no join. Existing rows take their session's value;
    a row whose session is gone keeps the default, ``claude-code``, the only platform there
    was before this migration.
    """
    conn.execute(
        "ALTER TABLE observations ADD COLUMN platform_source TEXT NOT NULL DEFAULT 'claude-code'"
    )
    conn.execute(
        "UPDATE observations SET platform_source = s.platform_source FROM sessions AS s"
        " WHERE s.content_session_id = observations.content_session_id"
        " AND s.platform_source != observations.platform_source"
    )


@migration
def m011_summary_updated_at(conn: sqlite3.Connection) -> None:
    """``session_summaries.updated_at_epoch``: when the row was last written (ms).

    A summary is re-written in place (``summaries.upsert``: Stop fired again for the same
    prompt, or ``recompress``) and keeps its id, so an id says nothing about what changed.
    Team publishing (``workbench/team/local_rows.py``) reads summaries written since its last
    run instead, so a rewritten one reaches the lake again. Existing rows take their creation
    time. Triggers set it, not ``upsert``: the INSERT stays the one every schema accepts, and
    no writer can forget it. ``AFTER UPDATE OF`` the written columns only, so the triggers'
    own UPDATE neither fires them again nor touches the FTS triggers (m008: ``OF`` too).
    """
    now = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    written = ", ".join(
        (
            "event_id",
            "request",
            "investigated",
            "learned",
            "completed",
            "next_steps",
            "notes",
            "files_read",
            "files_edited",
            "discovery_tokens",
            "generated_by",
        )
    )
    run_script(
        conn,
        f"""
        ALTER TABLE session_summaries ADD COLUMN updated_at_epoch INTEGER NOT NULL DEFAULT 0;
        UPDATE session_summaries SET updated_at_epoch = created_at_epoch;
        CREATE INDEX IF NOT EXISTS summaries_project_updated
            ON session_summaries (project, updated_at_epoch);
        CREATE TRIGGER IF NOT EXISTS summaries_updated_ai AFTER INSERT ON session_summaries
        BEGIN
            UPDATE session_summaries SET updated_at_epoch = {now} WHERE id = NEW.id;
        END;
        CREATE TRIGGER IF NOT EXISTS summaries_updated_au
        AFTER UPDATE OF {written} ON session_summaries BEGIN
            UPDATE session_summaries SET updated_at_epoch = {now} WHERE id = NEW.id;
        END;
        """,
    )


# The tables whose rows belong to a project, and the time column their project index sorts on.
PROJECT_TABLES = {
    "sessions": "started_at_epoch",
    "user_prompts": "created_at_epoch",
    "observations": "created_at_epoch",
    "session_summaries": "created_at_epoch",
}


@migration
def m012_project_key(conn: sqlite3.Connection) -> None:
    """``project_key`` next to ``project``: which folder a project is, not only its name.

    ``project`` stays the short name people read and filter by (``api``); ``project_key`` is
    what "this project" means for the memory a session is given (``workbench.locate.
    project_identity``: the main checkout's real path, so ``clientA/api`` and
    ``clientB/api`` never share memory and every worktree of one repository is one project).

    New rows: a session takes the key the hook sent (``sessions.ensure``), else its name; a
    prompt, observation or summary takes its session's key (triggers, so no writer can forget
    it and every INSERT since m001 still works), else its own project name.

    Existing rows, best effort: a session whose observation events recorded a ``cwd`` takes
    that folder's key when the folder still resolves to the session's project name (it still
    exists, or never was in a repository above it); every other session, and every row with
    no session (memories saved by hand), takes its name as its key. A name as key means "folder
    unknown": such a row is shown to every folder of that name (``recall.context
    .project_scope``), so an upgrade hides no memory; a row keyed by a path only to its folder.
    """
    for table, when in PROJECT_TABLES.items():
        conn.execute(f"ALTER TABLE {table} ADD COLUMN project_key TEXT")
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_project_key ON {table} (project_key, {when} DESC)"
        )
    _backfill_session_keys(conn)
    for table in PROJECT_TABLES:
        if table == "sessions":
            continue
        conn.execute(
            f"UPDATE {table} SET project_key = coalesce((SELECT s.project_key FROM sessions AS s"
            f" WHERE s.content_session_id = {table}.content_session_id"
            f" AND s.project = {table}.project), project)"
        )
    run_script(conn, _project_key_triggers())


def _backfill_session_keys(conn: sqlite3.Connection) -> None:
    from workbench.locate import project_identity  # stdlib only, like this module

    # Each session's first observation event with a cwd (SQLite's bare column of min()).
    first_cwd = {
        str(session): str(cwd)
        for session, cwd, _ in conn.execute(
            "SELECT content_session_id, json_extract(payload, '$.cwd'), min(id) FROM events"
            " WHERE kind = 'observation' AND content_session_id IS NOT NULL"
            " AND json_type(payload, '$.cwd') = 'text' AND json_extract(payload, '$.cwd') != ''"
            " GROUP BY content_session_id"
        )
    }
    conn.execute("UPDATE sessions SET project_key = project")
    for row_id, session, project in conn.execute(
        "SELECT id, content_session_id, project FROM sessions"
    ).fetchall():
        cwd = first_cwd.get(session)
        if cwd is None:
            continue
        identity = project_identity(cwd)
        if identity.name == project:
            conn.execute("UPDATE sessions SET project_key = ? WHERE id = ?", (identity.key, row_id))


def _project_key_triggers() -> str:
    """Fill ``project_key`` on insert when the writer did not name it (see m012)."""
    script = """
        CREATE TRIGGER IF NOT EXISTS sessions_project_key_ai AFTER INSERT ON sessions
        WHEN NEW.project_key IS NULL BEGIN
            UPDATE sessions SET project_key = NEW.project WHERE id = NEW.id;
        END;
    """
    for table in PROJECT_TABLES:
        if table == "sessions":
            continue
        script += f"""
        CREATE TRIGGER IF NOT EXISTS {table}_project_key_ai AFTER INSERT ON {table}
        WHEN NEW.project_key IS NULL BEGIN
            UPDATE {table} SET project_key = coalesce((SELECT s.project_key FROM sessions AS s
                WHERE s.content_session_id = NEW.content_session_id
                AND s.project = NEW.project), NEW.project) WHERE id = NEW.id;
        END;
        """
    return script


@migration
def m013_transcript_offsets(conn: sqlite3.Connection) -> None:
    """``transcript_offsets``: how far each agent transcript file has been read.

    ``workbench import-transcripts`` and the service's transcript watcher read Claude Code's
    and Codex's own session files (``workbench.transcripts``) into the events log. A file is
    read once: its row keeps the byte offset after the last whole line taken, and what
    identifies the file at that offset (``inode``, ``head_sha256`` of its first ``head_bytes``)
    so a file rotated or rewritten in place is seen as new and read again from the start
    (event keys make that re-read store nothing twice). ``state`` is the parser's JSON state
    between reads (tool calls waiting for their results, the session and its folder).
    """
    run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS transcript_offsets (
            path TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            inode INTEGER NOT NULL,
            head_bytes INTEGER NOT NULL,
            head_sha256 TEXT NOT NULL,
            offset INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(state)),
            updated_at_epoch INTEGER NOT NULL
        );
        """,
    )


@migration
def m014_observation_evidence(conn: sqlite3.Connection) -> None:
    """``observation_evidence`` and ``observation_staleness``: memory that knows when the code
    moved on (``workbench.staleness``).

    ``observation_evidence``: one row per file an observation cites, as it was when the
    observation was made: the git blob id of its content (NULL: the file was absent), its
    size and mtime (an unchanged file is then one ``stat``), and the repository's root and
    HEAD commit (NULL outside git, or before a first commit). Written by the service's worker
    at derive; canonical in the sense that it cannot be rebuilt (the files have moved on).
    Rows go with their observation (trigger).

    ``observation_staleness``: the verdicts of the last full check (``workbench stale``,
    ``POST /api/stale``), derived, for DuckDB's read-only ``staleness`` view, which cannot
    read the files itself.
    """
    run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS observation_evidence (
            observation_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            abs_path TEXT NOT NULL,
            blob TEXT,
            size INTEGER NOT NULL DEFAULT 0,
            mtime_ns INTEGER NOT NULL DEFAULT 0,
            repo_root TEXT,
            git_commit TEXT,
            UNIQUE (observation_id, path)
        );
        CREATE TRIGGER IF NOT EXISTS observation_evidence_ad AFTER DELETE ON observations BEGIN
            DELETE FROM observation_evidence WHERE observation_id = old.id;
            DELETE FROM observation_staleness WHERE observation_id = old.id;
        END;
        CREATE TABLE IF NOT EXISTS observation_staleness (
            observation_id INTEGER PRIMARY KEY,
            stale INTEGER NOT NULL CHECK (stale IN (0, 1)),
            changed_files TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(changed_files)),
            checked_at_epoch INTEGER NOT NULL
        );
        """,
    )


# Edited observations get their vectors again (workbench/recall/indexer.py).
_EMBEDDED_COLUMNS = ("title", "subtitle", "narrative", "facts", "concepts", "project")


@migration
def m015_observation_edits(conn: sqlite3.Connection) -> None:
    """``observation_edits``: observations whose embedded text (or project) changed in place.

    Why: vectors are keyed by the hash of an observation's text, and the indexer learns of
    new rows from ids that grow; a row edited in place keeps its id, so its old vector was
    searched forever and its new words never embedded. A trigger (any writer: the service, a
    migration, a user's own ``sqlite3``) appends the id here; the indexer reads the log, drops
    the stale vector (and its cached copy: an embedding can be inverted to the replaced
    words), lets the embedding worker embed the new text, and deletes what it has handled.
    Derived bookkeeping: losing it costs only a ``workbench reindex``.
    """
    changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in _EMBEDDED_COLUMNS)
    run_script(
        conn,
        f"""
        CREATE TABLE IF NOT EXISTS observation_edits (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            observation_id INTEGER NOT NULL
        );
        CREATE TRIGGER IF NOT EXISTS observation_edits_au
        AFTER UPDATE OF {", ".join(_EMBEDDED_COLUMNS)} ON observations
        WHEN {changed} BEGIN
            INSERT INTO observation_edits (observation_id) VALUES (new.id);
        END;
        """,
    )


@migration
def m016_observation_generation(conn: sqlite3.Connection) -> None:
    """``observation_generation``: one number that changes with every write to ``observations``.

    Why: the timeline by query reuses the anchor a search of the same query ranked a moment
    before (``recall.anchor_memo``), and may do so only while no observation changed: a new,
    edited, forgotten, imported or team-synced memory can change which hit is first. A trigger
    counts every insert, update and delete, whoever writes (the service, a migration, a user's
    own ``sqlite3``), so no write path can forget to; reading it is one primary-key lookup.
    Derived bookkeeping: its value means nothing across processes, only that it changed.
    """
    bump = "UPDATE observation_generation SET n = n + 1 WHERE id = 1;"
    run_script(
        conn,
        f"""
        CREATE TABLE IF NOT EXISTS observation_generation (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            n INTEGER NOT NULL
        );
        INSERT OR IGNORE INTO observation_generation (id, n) VALUES (1, 0);
        CREATE TRIGGER IF NOT EXISTS observation_generation_ai AFTER INSERT ON observations
        BEGIN {bump} END;
        CREATE TRIGGER IF NOT EXISTS observation_generation_au AFTER UPDATE ON observations
        BEGIN {bump} END;
        CREATE TRIGGER IF NOT EXISTS observation_generation_ad AFTER DELETE ON observations
        BEGIN {bump} END;
        """,
    )


# What the second stage reads of an observation (``rerank_features.load_texts``), and its id.
_READ_COLUMNS = ("id", "title", "subtitle", "narrative", "facts", "concepts")


@migration
def m017_observation_tokens(conn: sqlite3.Connection) -> None:
    """``observation_tokens``: each observation's words as the second stage reads them.

    Why: tokenizing a search's ~30 candidates (MaxSim's word pieces, the features' stemmed
    words) was ~1.7 ms of a timeline by query's ~15 ms CPU at 100k (issue 21), and a memory's
    words never change while its text does not. The indexer writes a row per observation
    (``recall.token_rows``); a search uses a row only when its digest is that of the text it
    read and its recipe that of the code and tokenizer it runs, else it tokenizes as before.

    A row is a copy of the memory's words, so it goes with them: a trigger (any writer: the
    service, forget, a migration, a user's own ``sqlite3``) deletes it when its observation is
    deleted or its text changes, before a forget's purge runs. Derived: ``workbench reindex``
    empties the table and the indexer fills it again.
    """
    changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in _READ_COLUMNS)
    run_script(
        conn,
        f"""
        CREATE TABLE IF NOT EXISTS observation_tokens (
            observation_id INTEGER PRIMARY KEY,
            digest BLOB NOT NULL,
            words_version INTEGER NOT NULL,
            title_words TEXT NOT NULL,
            body_words TEXT NOT NULL,
            pieces_recipe TEXT,
            pieces BLOB
        );
        CREATE TRIGGER IF NOT EXISTS observation_tokens_ad AFTER DELETE ON observations
        BEGIN
            DELETE FROM observation_tokens WHERE observation_id = old.id;
        END;
        CREATE TRIGGER IF NOT EXISTS observation_tokens_au
        AFTER UPDATE OF {", ".join(_READ_COLUMNS)} ON observations
        WHEN {changed} BEGIN
            DELETE FROM observation_tokens WHERE observation_id = old.id;
        END;
        """,
    )
