"""The read-only DuckDB layer: views, lists, offline loading, and every way a write is refused.

A real store in ``tmp_path`` written with the store API (``tests/analytics_data.py``); DuckDB
loads the pip-packaged sqlite extension from an empty extension directory, with no network.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests import analytics_data
from workbench.errors import NotFound, WorkbenchError
from workbench.store import duck


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "workbench.db"
    analytics_data.seed(path).close()  # closing checkpoints the WAL into the main file
    return path


@pytest.fixture
def ext_dir(tmp_path: Path) -> Path:
    path = tmp_path / "duckdb-extensions"
    path.mkdir()
    return path


@pytest.fixture
def con(db: Path, ext_dir: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duck.connect(db, extension_dir=ext_dir)
    yield connection
    connection.close()


def fingerprint(db: Path) -> dict[str, str]:
    """sha256 of the database and any WAL beside it (absent files are left out)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (db, db.with_name(db.name + "-wal"))
        if p.exists() and p.stat().st_size
    }


# ----- views ----------------------------------------------------------------------------------
VIEW_TABLES = {
    "observations": "observations",
    "sessions": "sessions",
    "prompts": "user_prompts",
    "summaries": "session_summaries",
    "injections": "injections",
    "injection_items": "injection_items",
    "fetches": "fetches",
}


def test_views_match_sqlite_row_counts(db: Path, con: duckdb.DuckDBPyConnection) -> None:
    raw = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        expected = {
            view: raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for view, table in VIEW_TABLES.items()
        }
    finally:
        raw.close()
    got = {view: con.execute(f"SELECT count(*) FROM {view}").fetchone()[0] for view in VIEW_TABLES}
    assert got == expected
    assert expected == {
        "observations": 3,
        "sessions": 2,
        "prompts": 3,
        "summaries": 1,
        "injections": 3,
        "injection_items": 4,
        "fetches": 4,
    }


def test_json_array_columns_are_lists(db: Path, con: duckdb.DuckDBPyConnection) -> None:
    types = {
        (view, name): kind
        for view in ("observations", "summaries")
        for name, kind, *_ in con.execute(f"DESCRIBE {view}").fetchall()
    }
    for column in ("facts", "concepts", "files_read", "files_modified"):
        assert types["observations", column] == "VARCHAR[]"
    for column in ("files_read", "files_edited"):
        assert types["summaries", column] == "VARCHAR[]"
    assert types["observations", "created_ts"] == "TIMESTAMP"
    assert types["observations", "day"] == "DATE"

    raw = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        stored = {
            r[0]: [json.loads(v) for v in r[1:]]
            for r in raw.execute(
                "SELECT id, facts, concepts, files_read, files_modified FROM observations"
            )
        }
    finally:
        raw.close()
    rows = con.execute(
        "SELECT id, facts, concepts, files_read, files_modified FROM observations"
    ).fetchall()
    assert {r[0]: list(r[1:]) for r in rows} == stored
    assert stored[1] == [["123", "45"], ["Cache", "loader"], ["a.py", "b.py"], ["a.py"]]
    unnested = con.execute(
        "SELECT c, count(*) FROM (SELECT unnest(concepts) AS c FROM observations)"
        " GROUP BY c ORDER BY c"
    ).fetchall()
    assert unnested == [("Cache", 2), ("cache", 2), ("loader", 2), ("lock", 2)]


def test_timestamps_are_utc(con: duckdb.DuckDBPyConnection) -> None:
    started, day = con.execute(
        "SELECT started_ts::VARCHAR, day::VARCHAR FROM sessions WHERE content_session_id = 's1'"
    ).fetchone()
    assert (started, day) == ("2023-11-14 22:13:20", "2023-11-14")


# ----- offline --------------------------------------------------------------------------------
def test_loads_the_packaged_extension_without_install(
    con: duckdb.DuckDBPyConnection, ext_dir: Path
) -> None:
    """Works with an empty extension directory and autoinstall/autoload off: no INSTALL ever."""
    # duckdb_extensions() would list the (locked) extension directory: ask for the functions.
    assert con.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'sqlite_scan'"
    ).fetchone() == (1,)
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN"
            " ('autoinstall_known_extensions', 'autoload_known_extensions',"
            " 'enable_external_access', 'lock_configuration', 'allowed_paths',"
            " 'allowed_directories', 'temp_directory')"
        ).fetchall()
    )
    assert settings == {
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
        "enable_external_access": "false",
        "lock_configuration": "true",
        "allowed_paths": "[]",  # the store's own path is not allow-listed (see duck layer 4)
        "allowed_directories": "[]",
        "temp_directory": "",
    }
    with pytest.raises(duckdb.Error):  # refused at once (no file system), not after a timeout
        con.execute("INSTALL sqlite")
    assert list(ext_dir.iterdir()) == []
    assert duck.extension_path().is_file()
    assert duck.extension_path().name == "sqlite_scanner.duckdb_extension"


def test_signature_verification_can_be_switched_on(db: Path, ext_dir: Path) -> None:
    connection = duck.connect(db, extension_dir=ext_dir, verify_signature=True)
    try:
        assert connection.execute("SELECT count(*) FROM observations").fetchone() == (3,)
    finally:
        connection.close()


# ----- read-only ------------------------------------------------------------------------------
WRITES = [
    "DELETE FROM observations",
    "DELETE FROM store.observations",
    "INSERT INTO store.sessions (content_session_id, project, started_at, started_at_epoch)"
    " VALUES ('x', 'p', 'now', 0)",
    "UPDATE store.observations SET title = 'pwned'",
    "CREATE TABLE store.evil (a INTEGER)",
    "CREATE TABLE scratch AS SELECT 1",
    "CREATE OR REPLACE VIEW observations AS SELECT 1 AS id",
    "DROP TABLE store.observations",
    "DROP VIEW observations",
    "ALTER TABLE store.observations ADD COLUMN x INTEGER",
    "ATTACH '{db}' AS rw (TYPE sqlite)",
    "DETACH store",
    "COPY (SELECT 1) TO '{tmp}/out.csv'",
    "COPY store.observations FROM '{tmp}/in.csv'",
    "EXPORT DATABASE '{tmp}/dump'",
    "INSTALL sqlite",
    "LOAD sqlite",
    "PRAGMA enable_progress_bar",
    "SET enable_external_access = true",
    "RESET lock_configuration",
    "CALL sqlite_attach('{db}')",
    "CHECKPOINT",
    "VACUUM",
    "BEGIN TRANSACTION",
    "USE store",
    "EXPLAIN SELECT 1",
    "SELECT * FROM sqlite_query('store', 'DELETE FROM observations RETURNING id')",
    "SELECT * FROM sqlite_attach('{db}')",
    "SELECT * FROM sqlite_scan('{db}', 'observations')",
    "SELECT * FROM SQLITE_SCAN('{db}', 'observations')",
    "SELECT * FROM main.sqlite_scan('{db}', 'observations')",
    "WITH x AS (SELECT * FROM sqlite_scan('{db}', 'events')) SELECT count(*) FROM x",
    "SELECT (SELECT count(*) FROM sqlite_scan('{db}', 'events')) AS n",
    "SELECT * FROM query('SELECT * FROM sqlite_scan(''{db}'', ''events'')')",
    "SELECT * FROM query_table('observations')",
    "SELECT * FROM checkpoint('store')",
    "SELECT 1; DELETE FROM store.observations",
    "SELECT 1; SELECT 2",
]


@pytest.mark.parametrize("statement", WRITES)
def test_write_statements_are_refused(
    statement: str, db: Path, con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    with pytest.raises(duck.ReadOnlyViolation) as refused:
        duck.run_sql(con, statement.format(db=db, tmp=tmp_path))
    assert "workbench sql" in refused.value.message
    assert refused.value.code == "READ_ONLY"


def test_refusals_leave_the_file_unchanged(
    db: Path, con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    before = fingerprint(db)
    for statement in WRITES:
        with pytest.raises(duck.ReadOnlyViolation):
            duck.run_sql(con, statement.format(db=db, tmp=tmp_path))
    assert duck.run_sql(con, "SELECT count(*) AS n FROM observations").to_pylist() == [{"n": 3}]
    con.close()
    assert fingerprint(db) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("out", "dump"))) == []


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM store.observations",
        "INSERT INTO store.fetches (observation_id, created_at, created_at_epoch)"
        " VALUES (1, 'x', 0)",
        "UPDATE store.observations SET title = 'pwned'",
        "DROP TABLE store.observations",
        "CREATE TABLE store.evil (a INTEGER)",
        "SELECT * FROM sqlite_query('store', 'DELETE FROM observations RETURNING id')",
        "COPY (SELECT 1) TO '{tmp}/out.csv'",
        "COPY (SELECT 1) TO '{db}' (USE_TMP_FILE false)",
        "COPY (SELECT 1) TO '{db}.wal'",
        "COPY (SELECT 1) TO '.tmp/out.csv'",
        "SELECT * FROM read_text('{db}')",
        "LOAD '{tmp}/other.duckdb_extension'",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "SELECT * FROM read_csv('{db}')",
    ],
)
def test_the_layers_under_the_guard_refuse_writes_on_their_own(
    statement: str, db: Path, con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    """Bypass ``check_read_only`` and hand DuckDB the statement directly: still refused.

    The store is attached READ_ONLY (SQLite itself refuses the write), the file system is off
    and the configuration is locked.
    """
    before = fingerprint(db)
    with pytest.raises(duckdb.Error):
        con.execute(statement.format(db=db, tmp=tmp_path))
    con.close()
    assert fingerprint(db) == before


def test_read_statements_run(con: duckdb.DuckDBPyConnection) -> None:
    for statement in (
        "SELECT project, type, count(*) AS n FROM observations GROUP BY ALL ORDER BY ALL",
        "FROM observations",
        "WITH t AS (SELECT type FROM observations) SELECT count(*) FROM t",
        "SHOW TABLES",
        "DESCRIBE observations",
        "SUMMARIZE sessions",
        "SELECT 1;",
    ):
        assert duck.run_sql(con, statement).num_rows >= 1, statement
    grouped = duck.run_sql(
        con, "SELECT project, type, count(*) AS n FROM observations GROUP BY ALL ORDER BY ALL"
    ).to_pylist()
    assert grouped == [
        {"project": "alpha", "type": "bugfix", "n": 1},
        {"project": "alpha", "type": "feature", "n": 1},
        {"project": "beta", "type": "feature", "n": 1},
    ]


def test_query_errors_say_what_is_wrong(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duck.QueryFailed, match="no_such_column") as failed:
        duck.run_sql(con, "SELECT no_such_column FROM observations")
    assert "DESCRIBE" in failed.value.message
    with pytest.raises(duck.QueryFailed, match="parse"):
        duck.run_sql(con, "SELEC 1")
    with pytest.raises(duck.ReadOnlyViolation, match="got 0"):
        duck.run_sql(con, "  ")


def test_refused_functions_cover_everything_the_extension_adds(db: Path, ext_dir: Path) -> None:
    """Every table function the sqlite extension registers opens files outside the sandbox."""
    plain = duckdb.connect(":memory:", config={"autoload_known_extensions": False})
    try:
        before = {
            r[0] for r in plain.execute("SELECT function_name FROM duckdb_functions()").fetchall()
        }
    finally:
        plain.close()
    connection = duck.connect(db, extension_dir=ext_dir)
    try:
        after = {
            r[0]
            for r in connection.execute("SELECT function_name FROM duckdb_functions()").fetchall()
        }
    finally:
        connection.close()
    added = after - before
    assert added, "the extension added no functions: is it loaded?"
    assert added <= duck.REFUSED_FUNCTIONS


# ----- bad databases --------------------------------------------------------------------------
def test_missing_database_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="workbench serve"):
        duck.connect(tmp_path / "nope.db")


def test_unmigrated_database_says_how_to_migrate(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE observations (id INTEGER PRIMARY KEY)")
    raw.commit()
    raw.close()
    with pytest.raises(WorkbenchError, match="Start the service once"):
        duck.connect(path)


def test_a_file_that_is_not_sqlite_is_named(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(WorkbenchError, match=r"cannot read .*junk\.db"):
        duck.connect(path)
