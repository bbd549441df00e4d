"""``workbench sql`` reads the views and nothing else (issue 9, item 9).

The blocklist of function names was bypassed by building the forbidden call inside a string:
``json_execute_serialized_sql(replace(json_serialize_sql('… xsqlite_scan(…)'), …))`` read any
SQLite file on disk. The guard is now an allow-list over the parse tree (only the views,
CTEs, and row-making table functions). Each attempt below aims at a secret SQLite file and a
secret text file beside the store, each holding a marker: the marker never comes back (in
rows or in a message), the store's bytes never change, and no file is written.
"""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests import analytics_data
from tests.conftest import ROOT, base_env, free_port
from workbench.store import duck

MARKER = "SANDBOX-MARKER-7f3a"


def _scan(sql_inner: str) -> str:
    """The reported bypass: the forbidden call hidden in a string, renamed back at run time."""
    hidden = sql_inner.replace("sqlite_scan", "xsqlite_scan").replace("'", "''")
    return (
        "SELECT * FROM json_execute_serialized_sql(replace(json_serialize_sql("
        f"'{hidden}'), 'xsqlite_scan', 'sqlite_scan'))"
    )


ATTEMPTS = [
    # the report, and variants of SQL executed from a string
    _scan("SELECT * FROM sqlite_scan('{secret_db}', 'secret')"),
    "FROM json_execute_serialized_sql(json_serialize_sql("
    "'SELECT * FROM read_text(''{secret_txt}'')'))",
    "SELECT (SELECT count(*) FROM json_execute_serialized_sql(json_serialize_sql("
    "'SELECT 1'))) AS n FROM observations",
    "WITH x AS (FROM json_execute_serialized_sql(json_serialize_sql("
    "'SELECT * FROM sqlite_query(''store'', ''SELECT payload FROM events'')'))) FROM x",
    "SELECT * FROM query('SELECT * FROM sqlite_scan(''{secret_db}'', ''secret'')')",
    "SELECT * FROM query_table('secret')",
    "SELECT * FROM query_table(['observations', 'sessions'])",
    # reading files
    "SELECT * FROM sqlite_scan('{secret_db}', 'secret')",
    "SELECT * FROM sqlite_attach('{secret_db}')",
    "SELECT * FROM sqlite_query('store', 'SELECT payload FROM events')",
    "SELECT * FROM read_csv('{secret_txt}')",
    "SELECT * FROM read_csv_auto('{secret_txt}')",
    "SELECT * FROM read_text('{secret_txt}')",
    "SELECT * FROM read_blob('{secret_db}')",
    "SELECT * FROM read_json('{secret_txt}')",
    "SELECT * FROM read_parquet('{secret_txt}')",
    "SELECT * FROM glob('{tmp}/*')",
    "SELECT * FROM '{secret_txt}'",
    'SELECT * FROM "{secret_db}"',
    "SELECT * FROM parquet_scan('{secret_txt}')",
    # the store's other tables, DuckDB's catalogs
    "SELECT * FROM store.events",
    "SELECT payload FROM store.main.events",
    "DESCRIBE store.events",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM duckdb_tables()",
    "SELECT * FROM pragma_table_info('observations')",
    "SHOW ALL TABLES",
    "SHOW databases",
    "SELECT * FROM observations, sqlite_scan('{secret_db}', 'secret')",
    "SELECT * FROM observations WHERE id IN (SELECT 1 FROM read_text('{secret_txt}'))",
    'WITH "{secret_txt}" AS (SELECT 1) SELECT * FROM "{secret_txt}"',
    "SELECT getenv('HOME')",
    "SUMMARIZE SELECT * FROM read_text('{secret_txt}')",
    "DESCRIBE SELECT * FROM sqlite_scan('{secret_db}', 'secret')",
    "SELECT * FROM unnest((SELECT list(content) FROM read_text('{secret_txt}')))",
    "SELECT o.id, f.content FROM observations o, LATERAL read_text(o.title) f",
    "FROM read_text('{secret_txt}') SELECT content",
    # statements that are not a SELECT
    "ATTACH '{secret_db}' AS s (TYPE sqlite)",
    "ATTACH '{secret_db}' AS s (TYPE sqlite, READ_ONLY)",
    "COPY (SELECT * FROM observations) TO '{tmp}/out.csv'",
    "COPY observations TO '{tmp}/out.parquet' (FORMAT parquet)",
    "INSTALL sqlite",
    "LOAD sqlite_scanner",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "PRAGMA enable_profiling",
    "PRAGMA database_list",
    "EXPORT DATABASE '{tmp}/dump'",
    "CREATE MACRO leak(p) AS TABLE SELECT * FROM read_text(p)",
    "CREATE TEMP TABLE t AS SELECT * FROM read_text('{secret_txt}')",
    "CALL sqlite_attach('{secret_db}')",
    "CALL pragma_table_info('observations')",
    "SELECT 1; SELECT * FROM read_text('{secret_txt}')",
]


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    data = tmp_path / "data"
    data.mkdir()
    db = data / "workbench.db"
    analytics_data.seed(db).close()
    secret_db = tmp_path / "secret.db"
    conn = sqlite3.connect(secret_db)
    conn.execute("CREATE TABLE secret (t TEXT)")
    conn.execute("INSERT INTO secret VALUES (?)", (MARKER,))
    conn.commit()
    conn.close()
    secret_txt = tmp_path / "secret.csv"
    secret_txt.write_text(f"t\n{MARKER}\n", encoding="utf-8")
    return {
        "data": data,
        "db": db,
        "secret_db": secret_db,
        "secret_txt": secret_txt,
        "tmp": tmp_path,
    }


def files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        # SQLite's shared-memory index changes on any read; an empty WAL holds no bytes
        if p.is_file() and not p.name.endswith("-shm") and p.stat().st_size
    }


def fill(statement: str, world: dict[str, Path]) -> str:
    return statement.format(**{k: str(v) for k, v in world.items()})


def test_there_are_more_than_twenty_attempts() -> None:
    assert len(ATTEMPTS) > 21


def test_the_reported_bypass_is_refused(world: dict[str, Path]) -> None:
    con = duck.connect(world["db"])
    try:
        with pytest.raises(duck.ReadOnlyViolation) as refused:
            duck.run_sql(con, fill(ATTEMPTS[0], world))
    finally:
        con.close()
    assert "json_execute_serialized_sql" in refused.value.message
    assert MARKER not in refused.value.message


def test_no_attempt_reads_or_writes_anything_outside_the_views(world: dict[str, Path]) -> None:
    before = files(world["tmp"])
    con = duck.connect(world["db"])
    leaked, ran = [], []
    try:
        for attempt in ATTEMPTS:
            statement = fill(attempt, world)
            try:
                rows = duck.run_sql(con, statement).to_pylist()
            except duck.ReadOnlyViolation as exc:
                if MARKER in exc.message:
                    leaked.append(statement)
                continue
            ran.append((statement, rows))
        # the sandbox still answers honest questions afterwards
        assert duck.run_sql(con, "SELECT count(*) AS n FROM observations").to_pylist() == [{"n": 3}]
    finally:
        con.close()
    assert ran == []  # every attempt refused by the guard, before DuckDB ran it
    assert leaked == []
    assert files(world["tmp"]) == before  # store, secrets unchanged; no out.csv, no dump/


def test_the_cli_refuses_the_bypass_and_prints_no_secret(world: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "sql", fill(ATTEMPTS[0], world)]
        + ["--data-dir", str(world["data"]), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=base_env(world["data"], free_port()),
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: workbench sql reads only the views")
    assert MARKER not in proc.stderr


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT project, type, count(*) AS n FROM observations GROUP BY ALL ORDER BY ALL",
        "WITH t AS (SELECT type FROM observations) SELECT count(*) FROM t",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) FROM r",
        "SELECT o.id, s.project FROM observations o JOIN sessions s ON o.project = s.project",
        "SELECT c, count(*) FROM (SELECT unnest(concepts) AS c FROM observations) GROUP BY c",
        "SELECT * FROM range(3)",
        "SELECT * FROM generate_series(1, 3)",
        "SELECT (SELECT max(id) FROM observations) AS top",
        "FROM main.observations SELECT id",
        "SHOW TABLES",
        "DESCRIBE observations",
        "SUMMARIZE sessions",
        "SELECT * FROM injection_items",
    ],
)
def test_honest_queries_over_the_views_still_run(world: dict[str, Path], statement: str) -> None:
    con = duck.connect(world["db"])
    try:
        assert duck.run_sql(con, statement).num_rows >= 1
    finally:
        con.close()
