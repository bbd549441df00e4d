"""The schema as a whole: exact tables from blank, migration rules, triggers, FTS sync.

Every test migrates its own SQLite file in ``tmp_path`` with the real ``schema.apply``.
Temporary migrations appended to ``schema.MIGRATIONS`` are removed by the ``registry``
fixture, so no test can leak one into another.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import migrate_until
from workbench.errors import SchemaTooNew
from workbench.models import ObservationDraft, SummaryDraft
from workbench.store import observations, schema, sessions, summaries
from workbench.store.connection import atomic, connect
from workbench.store.database import Store

EXPECTED_COLUMNS = {
    "sessions": {
        "id": "INTEGER",
        "content_session_id": "TEXT",
        "project": "TEXT",
        "platform_source": "TEXT",
        "status": "TEXT",
        "started_at": "TEXT",
        "started_at_epoch": "INTEGER",
        "completed_at": "TEXT",
        "completed_at_epoch": "INTEGER",
        "prompt_counter": "INTEGER",
        "project_key": "TEXT",
    },
    "user_prompts": {
        "id": "INTEGER",
        "session_id": "INTEGER",
        "content_session_id": "TEXT",
        "project": "TEXT",
        "prompt_number": "INTEGER",
        "prompt_text": "TEXT",
        "created_at": "TEXT",
        "created_at_epoch": "INTEGER",
        "project_key": "TEXT",
    },
    "events": {
        "id": "INTEGER",
        "event_key": "TEXT",
        "kind": "TEXT",
        "content_session_id": "TEXT",
        "project": "TEXT",
        "prompt_number": "INTEGER",
        "payload": "TEXT",
        "received_at": "TEXT",
        "received_at_epoch": "INTEGER",
    },
    "queue": {
        "event_id": "INTEGER",
        "status": "TEXT",
        "attempts": "INTEGER",
        "next_attempt_at": "INTEGER",
        "claimed_at": "INTEGER",
        "claimed_by": "TEXT",
        "last_error": "TEXT",
        "updated_at": "INTEGER",
    },
    "observations": {
        "id": "INTEGER",
        "session_id": "INTEGER",
        "content_session_id": "TEXT",
        "event_id": "INTEGER",
        "project": "TEXT",
        "prompt_number": "INTEGER",
        "type": "TEXT",
        "title": "TEXT",
        "subtitle": "TEXT",
        "narrative": "TEXT",
        "facts": "TEXT",
        "concepts": "TEXT",
        "files_read": "TEXT",
        "files_modified": "TEXT",
        "discovery_tokens": "INTEGER",
        "created_at": "TEXT",
        "created_at_epoch": "INTEGER",
        "content_hash": "TEXT",
        "generated_by": "TEXT",
        "agent_id": "TEXT",
        "agent_type": "TEXT",
        "platform_source": "TEXT",
        "project_key": "TEXT",
    },
    "session_summaries": {
        "id": "INTEGER",
        "session_id": "INTEGER",
        "content_session_id": "TEXT",
        "event_id": "INTEGER",
        "project": "TEXT",
        "prompt_number": "INTEGER",
        "request": "TEXT",
        "investigated": "TEXT",
        "learned": "TEXT",
        "completed": "TEXT",
        "next_steps": "TEXT",
        "notes": "TEXT",
        "files_read": "TEXT",
        "files_edited": "TEXT",
        "discovery_tokens": "INTEGER",
        "created_at": "TEXT",
        "created_at_epoch": "INTEGER",
        "generated_by": "TEXT",
        "updated_at_epoch": "INTEGER",
        "project_key": "TEXT",
    },
    "deleted_observations": {
        "content_hash": "TEXT",
        "observation_id": "INTEGER",
        "event_id": "INTEGER",
        "content_session_id": "TEXT",
        "project": "TEXT",
        "deleted_at": "TEXT",
        "deleted_at_epoch": "INTEGER",
        "prompt_number": "INTEGER",
        "created_at_epoch": "INTEGER",
    },
    "rerank_cache": {
        "key": "TEXT",
        "model": "TEXT",
        "ranked": "TEXT",
        "tokens": "INTEGER",
        "created_at_epoch": "INTEGER",
    },
    "transcript_offsets": {
        "path": "TEXT",
        "platform": "TEXT",
        "inode": "INTEGER",
        "head_bytes": "INTEGER",
        "head_sha256": "TEXT",
        "offset": "INTEGER",
        "state": "TEXT",
        "updated_at_epoch": "INTEGER",
    },
    "observation_evidence": {
        "observation_id": "INTEGER",
        "path": "TEXT",
        "abs_path": "TEXT",
        "blob": "TEXT",
        "size": "INTEGER",
        "mtime_ns": "INTEGER",
        "repo_root": "TEXT",
        "git_commit": "TEXT",
    },
    "observation_staleness": {
        "observation_id": "INTEGER",
        "stale": "INTEGER",
        "changed_files": "TEXT",
        "checked_at_epoch": "INTEGER",
    },
    "observation_edits": {"seq": "INTEGER", "observation_id": "INTEGER"},
    "observation_generation": {"id": "INTEGER", "n": "INTEGER"},
    "observation_tokens": {
        "observation_id": "INTEGER",
        "digest": "BLOB",
        "words_version": "INTEGER",
        "title_words": "TEXT",
        "body_words": "TEXT",
        "pieces_recipe": "TEXT",
        "pieces": "BLOB",
    },
}

# (from column, to table, to column, on delete)
EXPECTED_FOREIGN_KEYS = {
    "sessions": set(),
    "user_prompts": {("session_id", "sessions", "id", "CASCADE")},
    "events": set(),
    "queue": {("event_id", "events", "id", "NO ACTION")},
    "observations": {
        ("session_id", "sessions", "id", "SET NULL"),
        ("event_id", "events", "id", "NO ACTION"),
    },
    "session_summaries": {
        ("session_id", "sessions", "id", "SET NULL"),
        ("event_id", "events", "id", "NO ACTION"),
    },
}

FTS_TRIGGERS = {
    f"{fts}_{suffix}"
    for fts in ("observations_fts", "summaries_fts", "prompts_fts")
    for suffix in ("ai", "ad", "au")
}
APPEND_ONLY_TRIGGERS = {"events_append_only_update", "events_append_only_delete"}
FILE_INDEX_TRIGGERS = {"observation_files_ai", "observation_files_ad", "observation_files_au"}
SUMMARY_UPDATED_TRIGGERS = {"summaries_updated_ai", "summaries_updated_au"}
STALENESS_TRIGGERS = {"observation_evidence_ad"}
PROJECT_KEY_TRIGGERS = {
    f"{table}_project_key_ai"
    for table in ("sessions", "user_prompts", "observations", "session_summaries")
}
VECTOR_EDIT_TRIGGERS = {"observation_edits_au"}
GENERATION_TRIGGERS = {f"observation_generation_{suffix}" for suffix in ("ai", "au", "ad")}
TOKEN_TRIGGERS = {"observation_tokens_ad", "observation_tokens_au"}


# ----- helpers --------------------------------------------------------------------------------
@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "workbench.db"


@pytest.fixture
def conn(db_path: Path) -> Iterator[sqlite3.Connection]:
    """A connection with the real connection policy on a blank file (closed after)."""
    connection = connect(db_path)
    yield connection
    connection.close()


@pytest.fixture
def migrated(conn: sqlite3.Connection) -> sqlite3.Connection:
    schema.apply(conn, "test.db")
    return conn


@pytest.fixture
def registry() -> Iterator[list[tuple[str, schema.Migration]]]:
    """``schema.MIGRATIONS``, restored exactly after the test whatever it registered."""
    saved = list(schema.MIGRATIONS)
    try:
        yield schema.MIGRATIONS
    finally:
        schema.MIGRATIONS[:] = saved


def master_dump(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        )
    ]


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def triggers(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}


def fts_ids(conn: sqlite3.Connection, fts: str, query: str) -> set[int]:
    return {r[0] for r in conn.execute(f"SELECT rowid FROM {fts} WHERE {fts} MATCH ?", (query,))}


def fts_integrity(conn: sqlite3.Connection, fts: str) -> None:
    """FTS5's own check that the index matches its external content table (raises if not)."""
    conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('integrity-check')")


def fts_terms(conn: sqlite3.Connection, fts: str) -> set[str]:
    """Every term the index holds (fts5vocab): empty once every row is deleted, if and only if
    each delete named exactly the values that were indexed."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{fts}_terms USING fts5vocab(main, {fts}, row)"
    )
    return {r[0] for r in conn.execute(f"SELECT term FROM temp.{fts}_terms")}


def add_observation(conn: sqlite3.Connection, title: str, narrative: str = "") -> int:
    with atomic(conn):
        obs_id, created = observations.insert(
            conn,
            ObservationDraft(title=title, narrative=narrative, facts=["fact one"]),
            content_session_id=None,
            project="p",
        )
    assert created
    return obs_id


# ----- the schema from blank ------------------------------------------------------------------
def test_blank_database_gets_exact_columns(migrated: sqlite3.Connection) -> None:
    actual = {
        table: {r["name"]: r["type"] for r in migrated.execute(f"PRAGMA table_info({table})")}
        for table in EXPECTED_COLUMNS
    }
    assert actual == EXPECTED_COLUMNS


def test_blank_database_gets_exact_foreign_keys(migrated: sqlite3.Connection) -> None:
    actual = {
        table: {
            (r["from"], r["table"], r["to"], r["on_delete"])
            for r in migrated.execute(f"PRAGMA foreign_key_list({table})")
        }
        for table in EXPECTED_FOREIGN_KEYS
    }
    assert actual == EXPECTED_FOREIGN_KEYS


def test_blank_database_gets_exact_triggers(migrated: sqlite3.Connection) -> None:
    assert triggers(migrated) == (
        FTS_TRIGGERS
        | APPEND_ONLY_TRIGGERS
        | FILE_INDEX_TRIGGERS
        | SUMMARY_UPDATED_TRIGGERS
        | PROJECT_KEY_TRIGGERS
        | STALENESS_TRIGGERS
        | VECTOR_EDIT_TRIGGERS
        | GENERATION_TRIGGERS
        | TOKEN_TRIGGERS
    )


def test_an_edit_of_embedded_text_or_project_is_logged_for_the_indexer(
    migrated: sqlite3.Connection,
) -> None:
    """m014: the indexer learns of in-place edits from ``observation_edits``; a write that
    changes nothing it embeds (or the same value again) logs nothing."""
    obs_id = add_observation(migrated, "Flaky DNS in CI")
    migrated.execute("UPDATE observations SET title = title WHERE id = ?", (obs_id,))
    migrated.execute("UPDATE observations SET platform_source = 'codex' WHERE id = ?", (obs_id,))
    assert migrated.execute("SELECT count(*) FROM observation_edits").fetchone()[0] == 0
    migrated.execute("UPDATE observations SET narrative = 'new words' WHERE id = ?", (obs_id,))
    migrated.execute("UPDATE observations SET project = 'moved' WHERE id = ?", (obs_id,))
    logged = [r[0] for r in migrated.execute("SELECT observation_id FROM observation_edits")]
    assert logged == [obs_id, obs_id]


def test_every_write_to_an_observation_changes_the_generation(
    migrated: sqlite3.Connection,
) -> None:
    """m016: an insert, an update of any column and a delete each change
    ``observation_generation`` (the timeline's anchor memo is valid only while it holds);
    a write to another table does not."""

    def generation() -> int:
        return int(migrated.execute("SELECT n FROM observation_generation").fetchone()[0])

    seen = [generation()]
    obs_id = add_observation(migrated, "Flaky DNS in CI")
    seen.append(generation())
    migrated.execute("UPDATE observations SET platform_source = 'codex' WHERE id = ?", (obs_id,))
    seen.append(generation())
    migrated.execute("UPDATE observations SET title = 'Flaky DNS' WHERE id = ?", (obs_id,))
    seen.append(generation())
    migrated.execute("DELETE FROM observation_edits")
    assert generation() == seen[-1]
    migrated.execute("DELETE FROM observations WHERE id = ?", (obs_id,))
    seen.append(generation())
    assert seen == sorted(set(seen)), seen  # each write moved it on


# The FTS tables as m008 leaves them: contentless, porter-stemmed, fed through the splitter.
EXPECTED_FTS_SQL = {
    "observations_fts": "CREATE VIRTUAL TABLE observations_fts USING fts5 ( title, subtitle,"
    " narrative, facts, concepts, content='', tokenize='porter unicode61' )",
    "summaries_fts": "CREATE VIRTUAL TABLE summaries_fts USING fts5 ( request, investigated,"
    " learned, completed, next_steps, notes, content='', tokenize='porter unicode61' )",
    "prompts_fts": "CREATE VIRTUAL TABLE prompts_fts USING fts5 ( prompt_text, content='',"
    " tokenize='porter unicode61' )",
}


def _normalised_sql(conn: sqlite3.Connection, name: str) -> str:
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return " ".join(sql.split())


def test_blank_database_gets_exact_fts_tables_and_triggers(migrated: sqlite3.Connection) -> None:
    for fts, (table, columns) in schema.FTS_TABLES.items():
        assert _normalised_sql(migrated, fts) == EXPECTED_FTS_SQL[fts]
        cols = ", ".join(columns)
        new = ", ".join(f"wb_split_identifiers(new.{c})" for c in columns)
        old = ", ".join(f"wb_split_identifiers(old.{c})" for c in columns)
        insert = f"INSERT INTO {fts} (rowid, {cols}) VALUES (new.id, {new});"
        delete = f"INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES ('delete', old.id, {old});"
        assert _normalised_sql(migrated, f"{fts}_ai") == (
            f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN {insert} END"
        )
        assert _normalised_sql(migrated, f"{fts}_ad") == (
            f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN {delete} END"
        )
        assert _normalised_sql(migrated, f"{fts}_au") == (
            f"CREATE TRIGGER {fts}_au AFTER UPDATE OF {cols} ON {table} BEGIN {delete} {insert} END"
        )


def test_a_plain_sqlite_connection_can_search_but_not_write(
    migrated: sqlite3.Connection, db_path: Path
) -> None:
    """Without ``wb_split_identifiers`` (the sqlite3 shell) the store reads, and refuses writes."""
    obs_id = add_observation(migrated, "ReviewBuildWorker stalls")
    plain = sqlite3.connect(db_path)
    try:
        assert fts_ids(plain, "observations_fts", "build worker") == {obs_id}
        with pytest.raises(sqlite3.OperationalError, match="wb_split_identifiers"):
            plain.execute("UPDATE observations SET title = 'x' WHERE id = ?", (obs_id,))
    finally:
        plain.close()
    assert fts_ids(migrated, "observations_fts", "reviewbuildworker") == {obs_id}
    fts_integrity(migrated, "observations_fts")


def test_blank_database_records_every_migration_in_order(migrated: sqlite3.Connection) -> None:
    assert schema.applied(migrated) == [name for name, _ in schema.MIGRATIONS]
    assert schema.pending(migrated) == []
    assert schema.schema_version(migrated) == len(schema.MIGRATIONS)


def test_connection_policy_is_applied(migrated: sqlite3.Connection) -> None:
    assert migrated.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert migrated.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert migrated.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert migrated.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000


def test_foreign_keys_are_enforced(migrated: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        migrated.execute(
            "INSERT INTO user_prompts (session_id, content_session_id, project, prompt_number,"
            " prompt_text, created_at, created_at_epoch) VALUES (999, 's', 'p', 1, 't', 'x', 1)"
        )


def test_json_array_columns_refuse_non_arrays(migrated: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        migrated.execute(
            "INSERT INTO observations (project, type, title, facts, created_at,"
            " created_at_epoch, content_hash) VALUES ('p', 'discovery', 't', '{\"a\": 1}',"
            " 'x', 1, 'h')"
        )


# ----- applying -------------------------------------------------------------------------------
def test_apply_twice_changes_nothing(migrated: sqlite3.Connection) -> None:
    before = master_dump(migrated)
    records = migrated.execute("SELECT name, applied_at FROM _migrations").fetchall()
    changes = migrated.total_changes
    assert schema.apply(migrated, "test.db") == []
    assert master_dump(migrated) == before
    assert migrated.execute("SELECT name, applied_at FROM _migrations").fetchall() == records
    assert migrated.total_changes == changes


def test_apply_returns_the_names_it_applied(conn: sqlite3.Connection) -> None:
    assert schema.apply(conn, "test.db") == [name for name, _ in schema.MIGRATIONS]


def test_pending_is_read_only(db_path: Path) -> None:
    # A blank file opened read-only with query_only=ON: any write pending() tried would raise.
    connect(db_path).close()
    ro = connect(db_path, readonly=True)
    try:
        assert schema.pending(ro) == [name for name, _ in schema.MIGRATIONS]
        assert master_dump(ro) == []
        assert ro.total_changes == 0
    finally:
        ro.close()


def test_pending_lists_only_what_is_missing_and_writes_nothing(
    conn: sqlite3.Connection, registry: list[tuple[str, schema.Migration]]
) -> None:
    schema.apply(conn, "test.db")

    @schema.migration
    def m900_extra(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE extra (x)")

    before, changes = master_dump(conn), conn.total_changes
    assert schema.pending(conn) == ["m900_extra"]
    assert master_dump(conn) == before
    assert conn.total_changes == changes


def test_upgrade_from_v1_indexes_existing_rows(conn: sqlite3.Connection) -> None:
    """A store that only has m001 (with rows) gains FTS that already covers those rows."""
    first_name, first = schema.MIGRATIONS[0]
    with atomic(conn):
        schema._ensure_table(conn)
        first(conn)
        conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, 'then')", (first_name,))
    obs_id = add_observation(conn, "legacy caching decision")
    assert "observations_fts" not in table_names(conn)

    applied_now = schema.apply(conn, "test.db")

    assert applied_now == [name for name, _ in schema.MIGRATIONS[1:]]
    assert fts_ids(conn, "observations_fts", "caching") == {obs_id}
    fts_integrity(conn, "observations_fts")


def test_two_connections_applying_at_once_apply_each_migration_once(db_path: Path) -> None:
    connect(db_path).close()
    results: list[list[str]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def run() -> None:
        c = connect(db_path)
        try:
            barrier.wait()
            results.append(schema.apply(c, str(db_path)))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            c.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    names = [name for name, _ in schema.MIGRATIONS]
    assert sorted(results[0] + results[1]) == sorted(names)
    check = connect(db_path)
    try:
        assert schema.applied(check) == names
    finally:
        check.close()


# ----- refusing a newer database --------------------------------------------------------------
def _store_with_unknown_migration(db_path: Path) -> bytes:
    with Store(db_path) as store:
        store.conn.execute(
            "INSERT INTO _migrations (name, applied_at) VALUES ('m999_from_the_future', 'x')"
        )
    # Closing the last connection checkpoints the WAL into the main file.
    assert not Path(f"{db_path}-wal").exists() or Path(f"{db_path}-wal").stat().st_size == 0
    return db_path.read_bytes()


def test_unknown_migration_is_refused_and_file_untouched(db_path: Path) -> None:
    before = _store_with_unknown_migration(db_path)

    with pytest.raises(SchemaTooNew) as excinfo:
        Store(db_path)

    message = excinfo.value.message
    assert "m999_from_the_future" in message
    assert str(db_path) in message
    assert "newer workbench" in message
    assert "not touched" in message
    assert db_path.read_bytes() == before
    wal = Path(f"{db_path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_unknown_migration_is_refused_by_apply_itself(conn: sqlite3.Connection) -> None:
    schema.apply(conn, "test.db")
    conn.execute("INSERT INTO _migrations (name, applied_at) VALUES ('m999_newer', 'x')")
    before = master_dump(conn)
    with pytest.raises(SchemaTooNew, match="m999_newer"):
        schema.apply(conn, "test.db")
    assert master_dump(conn) == before


def test_unknown_migration_is_refused_read_only_too(db_path: Path) -> None:
    before = _store_with_unknown_migration(db_path)
    with pytest.raises(SchemaTooNew):
        Store(db_path, readonly=True)
    assert db_path.read_bytes() == before


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_refused_open_leaves_no_file_handle(db_path: Path) -> None:
    _store_with_unknown_migration(db_path)

    def handles() -> int:
        count = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}").startswith(str(db_path)):
                    count += 1
            except OSError:
                pass
        return count

    before = handles()
    with pytest.raises(SchemaTooNew):
        Store(db_path)
    assert handles() == before


# ----- registering ----------------------------------------------------------------------------
def test_registering_a_name_twice_raises(registry: list[tuple[str, schema.Migration]]) -> None:
    before = list(registry)

    def m001_initial(c: sqlite3.Connection) -> None:  # same name as the real one
        pass

    with pytest.raises(ValueError, match=r"'m001_initial' is registered twice"):
        schema.migration(m001_initial)
    assert registry == before


def test_order_follows_registration_not_names(
    conn: sqlite3.Connection, registry: list[tuple[str, schema.Migration]]
) -> None:
    @schema.migration
    def m999_registered_first(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE ran (name TEXT)")
        c.execute("INSERT INTO ran VALUES ('m999')")

    @schema.migration
    def m000_registered_second(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO ran VALUES ('m000')")  # fails unless m999 ran before it

    assert schema.pending(conn)[-2:] == ["m999_registered_first", "m000_registered_second"]
    schema.apply(conn, "test.db")
    assert [r[0] for r in conn.execute("SELECT name FROM ran ORDER BY rowid")] == [
        "m999",
        "m000",
    ]
    assert schema.applied(conn)[-2:] == ["m999_registered_first", "m000_registered_second"]


def test_failing_migration_leaves_no_record_and_no_partial_tables(
    conn: sqlite3.Connection, registry: list[tuple[str, schema.Migration]]
) -> None:
    class Boom(Exception):
        pass

    @schema.migration
    def m900_half_done(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half_done (x INTEGER)")
        c.execute("INSERT INTO half_done VALUES (1)")
        raise Boom("disk full, say")

    with pytest.raises(Boom):
        schema.apply(conn, "test.db")

    assert not conn.in_transaction
    assert "half_done" not in table_names(conn)
    assert "m900_half_done" not in schema.applied(conn)
    assert schema.pending(conn) == ["m900_half_done"]
    # The migrations before it committed on their own and stay applied.
    assert schema.applied(conn) == [name for name, _ in registry[:-1]]
    assert "observations" in table_names(conn)


def test_failing_first_migration_leaves_a_blank_schema(
    conn: sqlite3.Connection, registry: list[tuple[str, schema.Migration]]
) -> None:
    def m001_broken(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE first_table (x)")
        c.execute("THIS IS NOT SQL")

    registry[:] = [("m001_broken", m001_broken)]
    with pytest.raises(sqlite3.OperationalError):
        schema.apply(conn, "test.db")
    assert table_names(conn) == {"_migrations"}
    assert schema.applied(conn) == []


def test_run_script_refuses_an_incomplete_statement(conn: sqlite3.Connection) -> None:
    with pytest.raises(ValueError, match="incomplete SQL statement"):
        schema.run_script(conn, "CREATE TABLE a (x);\nCREATE TABLE b (y")


# ----- append-only events ---------------------------------------------------------------------
def _event(conn: sqlite3.Connection) -> int:
    cur = conn.execute(
        "INSERT INTO events (kind, payload, received_at, received_at_epoch)"
        " VALUES ('observation', '{}', 'x', 1)"
    )
    return int(cur.lastrowid or 0)


def test_events_refuse_update(migrated: sqlite3.Connection) -> None:
    event_id = _event(migrated)
    with pytest.raises(sqlite3.IntegrityError, match="events are append-only"):
        migrated.execute("UPDATE events SET project = 'other' WHERE id = ?", (event_id,))
    assert migrated.execute("SELECT project FROM events").fetchone()[0] is None


def test_events_refuse_delete(migrated: sqlite3.Connection) -> None:
    event_id = _event(migrated)
    with pytest.raises(sqlite3.IntegrityError, match="events are append-only"):
        migrated.execute("DELETE FROM events WHERE id = ?", (event_id,))
    assert migrated.execute("SELECT count(*) FROM events").fetchone()[0] == 1


def test_events_refuse_unknown_kind_and_invalid_payload(migrated: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        migrated.execute(
            "INSERT INTO events (kind, payload, received_at, received_at_epoch)"
            " VALUES ('nonsense', '{}', 'x', 1)"
        )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        migrated.execute(
            "INSERT INTO events (kind, payload, received_at, received_at_epoch)"
            " VALUES ('observation', 'not json', 'x', 1)"
        )


# ----- FTS stays in sync ----------------------------------------------------------------------
def test_observation_fts_follows_insert_update_delete(migrated: sqlite3.Connection) -> None:
    obs_id = add_observation(migrated, "sqlite busy timeout", "writers queue on the lock")
    other = add_observation(migrated, "unrelated title", "nothing to see")
    assert fts_ids(migrated, "observations_fts", "timeout") == {obs_id}
    assert fts_ids(migrated, "observations_fts", "fact") == {obs_id, other}  # facts indexed

    migrated.execute(
        "UPDATE observations SET title = 'faiss index rebuild' WHERE id = ?", (obs_id,)
    )
    assert fts_ids(migrated, "observations_fts", "timeout") == set()
    assert fts_ids(migrated, "observations_fts", "faiss") == {obs_id}
    assert fts_ids(migrated, "observations_fts", "writers") == {obs_id}  # unchanged column

    with atomic(migrated):
        assert observations.delete_ids(migrated, [obs_id]) == 1
    assert fts_ids(migrated, "observations_fts", "faiss") == set()
    assert fts_ids(migrated, "observations_fts", "unrelated") == {other}
    fts_integrity(migrated, "observations_fts")


def test_prompt_fts_is_porter_stemmed_and_follows_deletes(migrated: sqlite3.Connection) -> None:
    with atomic(migrated):
        session = sessions.ensure(migrated, "s1", "p")
        _, prompt_id, _ = sessions.record_prompt(migrated, session, "running the migrations")
    assert fts_ids(migrated, "prompts_fts", "run") == {prompt_id}
    assert fts_ids(migrated, "prompts_fts", "migration") == {prompt_id}
    # Deleting the session cascades to its prompts, and the FTS trigger follows the cascade.
    migrated.execute("DELETE FROM sessions WHERE content_session_id = 's1'")
    assert migrated.execute("SELECT count(*) FROM user_prompts").fetchone()[0] == 0
    assert fts_ids(migrated, "prompts_fts", "run") == set()
    fts_integrity(migrated, "prompts_fts")


def test_summary_fts_follows_upsert(migrated: sqlite3.Connection) -> None:
    with atomic(migrated):
        sessions.ensure(migrated, "s1", "p")
        first = summaries.upsert(
            migrated,
            SummaryDraft(request="fix the flaky websocket test"),
            content_session_id="s1",
            project="p",
            prompt_number=1,
        )
    assert fts_ids(migrated, "summaries_fts", "websocket") == {first}
    with atomic(migrated):
        second = summaries.upsert(
            migrated,
            SummaryDraft(request="profile the slow exporter"),
            content_session_id="s1",
            project="p",
            prompt_number=1,
        )
    assert second == first  # one summary per (session, prompt): replaced, not appended
    assert fts_ids(migrated, "summaries_fts", "websocket") == set()
    assert fts_ids(migrated, "summaries_fts", "exporter") == {first}
    fts_integrity(migrated, "summaries_fts")


def test_observation_files_follows_inserts_updates_and_deletes(
    migrated: sqlite3.Connection,
) -> None:
    def rows() -> set[tuple[str, int, int]]:
        return {tuple(r) for r in migrated.execute("SELECT * FROM observation_files")}

    with atomic(migrated):
        obs_id, _ = observations.insert(
            migrated,
            ObservationDraft(title="t", files_read=["/a.py", "/b.py"], files_modified=["/a.py"]),
            content_session_id="s",
            project="p",
        )
    assert rows() == {("/a.py", obs_id, 0), ("/b.py", obs_id, 0), ("/a.py", obs_id, 1)}
    with atomic(migrated):
        migrated.execute("UPDATE observations SET files_modified = '[\"/c.py\"]'")
    assert rows() == {("/a.py", obs_id, 0), ("/b.py", obs_id, 0), ("/c.py", obs_id, 1)}
    with atomic(migrated):
        migrated.execute("DELETE FROM observations")
    assert rows() == set()


# ----- m007: the scrub kind and the one sanctioned update --------------------------------------
def _names_after(last: str) -> list[str]:
    """The registered migrations after ``last``: what an older store applies on upgrade."""
    names = [name for name, _ in schema.MIGRATIONS]
    return names[names.index(last) + 1 :]


def test_m007_upgrades_a_store_with_events_and_tombstones(conn: sqlite3.Connection) -> None:
    migrate_until(conn, "m006_observation_files")
    event_id = _event(conn)
    conn.execute(
        "INSERT INTO deleted_observations (content_hash, observation_id, event_id,"
        " deleted_at, deleted_at_epoch) VALUES ('h', 7, ?, 'x', 1)",
        (event_id,),
    )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute(
            "INSERT INTO events (kind, payload, received_at, received_at_epoch)"
            " VALUES ('scrub', '{}', 'x', 1)"
        )

    assert schema.apply(conn, "test.db") == _names_after("m006_observation_files")

    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    row = conn.execute("SELECT * FROM deleted_observations").fetchone()
    assert (row["observation_id"], row["event_id"], row["created_at_epoch"]) == (7, event_id, None)
    assert conn.execute("SELECT payload FROM events").fetchone()[0] == "{}"
    conn.execute(
        "INSERT INTO events (kind, payload, received_at, received_at_epoch)"
        " VALUES ('scrub', json_object('event_id', ?, 'sha256', 'abc'), 'x', 1)",
        (event_id,),
    )
    conn.execute(
        "UPDATE events SET payload = json_object('scrubbed', 'abc') WHERE id = ?", (event_id,)
    )
    assert schema.apply(conn, "test.db") == []


def test_m007_widens_only_the_kind_list(migrated: sqlite3.Connection) -> None:
    (sql,) = migrated.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()
    assert "'session_end', 'memory_save', 'scrub')" in sql
    assert sql.count("scrub") == 1


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("UPDATE events SET payload = json_object('scrubbed', 'abc') WHERE id = 1", "no record"),
        ("UPDATE events SET payload = json_object('scrubbed', 'zzz') WHERE id = 2", "wrong hash"),
        (
            "UPDATE events SET payload = json_object('scrubbed', 'abc'), project = 'q'"
            " WHERE id = 2",
            "another column",
        ),
        ("UPDATE events SET payload = '{}' WHERE id = 2", "not the hash shape"),
        ("UPDATE events SET payload = json_object('scrubbed', 'x') WHERE id = 3", "the record"),
        ("DELETE FROM events WHERE id = 2", "delete"),
    ],
)
def test_events_allow_only_the_recorded_scrub(
    migrated: sqlite3.Connection, sql: str, why: str
) -> None:
    _event(migrated)  # 1: never scrubbed
    target = _event(migrated)  # 2: a scrub record names it
    migrated.execute(
        "INSERT INTO events (kind, payload, received_at, received_at_epoch)"
        " VALUES ('scrub', json_object('event_id', ?, 'sha256', 'abc'), 'x', 1)",
        (target,),
    )  # 3
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        migrated.execute(sql)
    assert [r[0] for r in migrated.execute("SELECT payload FROM events ORDER BY id")][:2] == [
        "{}",
        "{}",
    ], why


# ----- m008: identifiers split in the FTS index -------------------------------------------------
def test_m008_upgrades_a_store_from_m007_and_reindexes_every_row(conn: sqlite3.Connection) -> None:
    migrate_until(conn, "m007_event_scrub")
    obs_id = add_observation(conn, "ReviewBuildWorker stalls", "check_token rejects expired keys")
    with atomic(conn):
        session = sessions.ensure(conn, "s1", "p")
        _, prompt_id, _ = sessions.record_prompt(conn, session, "why is HttpRetryPolicy slow")
        summary_id = summaries.upsert(
            conn,
            SummaryDraft(learned="InvoiceMailer batches per tenant"),
            content_session_id="s1",
            project="p",
            prompt_number=1,
        )
    assert fts_ids(conn, "observations_fts", "worker") == set()  # one token before m008

    assert schema.apply(conn, "test.db") == _names_after("m007_event_scrub")

    assert fts_ids(conn, "observations_fts", "build worker") == {obs_id}
    assert fts_ids(conn, "observations_fts", "reviewbuildworker") == {obs_id}
    assert fts_ids(conn, "observations_fts", '"check token"') == {obs_id}
    assert fts_ids(conn, "prompts_fts", "retry policy") == {prompt_id}
    assert fts_ids(conn, "summaries_fts", "mailer") == {summary_id}
    for fts in schema.FTS_TABLES:
        assert _normalised_sql(conn, fts) == EXPECTED_FTS_SQL[fts]
        fts_integrity(conn, fts)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # Writes after the upgrade keep the new index in sync (delete by the expanded old values).
    with atomic(conn):
        conn.execute(
            "UPDATE observations SET title = 'InvoiceMailer retries' WHERE id = ?", (obs_id,)
        )
    assert fts_ids(conn, "observations_fts", "worker") == set()
    assert fts_ids(conn, "observations_fts", "invoice mailer") == {obs_id}
    with atomic(conn):
        assert observations.delete_ids(conn, [obs_id]) == 1
    assert fts_ids(conn, "observations_fts", "mailer OR invoicemailer OR check") == set()
    assert fts_terms(conn, "observations_fts") == set()  # nothing left behind by the deletes
    with atomic(conn):
        conn.execute("DELETE FROM sessions")  # cascades to the prompt
        conn.execute("DELETE FROM session_summaries")
    assert fts_terms(conn, "prompts_fts") == fts_terms(conn, "summaries_fts") == set()
    assert schema.apply(conn, "test.db") == []


def test_rebuild_fts_restores_a_wiped_index_exactly(migrated: sqlite3.Connection) -> None:
    obs_id = add_observation(migrated, "TimelineScheduler drift", "XMLHttpRequest retried")
    query = "timeline scheduler OR xml http request"
    with atomic(migrated):
        migrated.execute("INSERT INTO observations_fts (observations_fts) VALUES ('delete-all')")
    assert fts_ids(migrated, "observations_fts", query) == set()
    with atomic(migrated):
        schema.rebuild_fts(migrated)
    assert fts_ids(migrated, "observations_fts", query) == {obs_id}
    with atomic(migrated):  # rebuilt rows are deletable by the trigger: same expanded values
        assert observations.delete_ids(migrated, [obs_id]) == 1
    assert fts_ids(migrated, "observations_fts", query) == set()
    assert fts_terms(migrated, "observations_fts") == set()
