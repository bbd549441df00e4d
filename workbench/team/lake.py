"""A DuckDB connection to the team lake: DuckLake, catalog in PostgreSQL, Parquet on shared storage.

Extensions: ``ducklake`` and ``postgres_scanner`` come from their PyPI packages
(``duckdb-extension-ducklake``, ``duckdb-extension-postgres-scanner``, pinned to duckdb's
version) and are loaded **by file path** with ``autoinstall_known_extensions`` and
``autoload_known_extensions`` off, as ``workbench/store/duck.py`` loads ``sqlite_scanner``:
DuckDB never tries ``INSTALL`` (a download, which fails offline after seconds).

The lake is attached as ``ATTACH 'ducklake:postgres:<libpq conninfo>' AS lake (DATA_PATH …)``
(https://ducklake.select/docs/stable/duckdb/usage/connecting). The conninfo carries host, port,
database and user only; libpq reads the password from ``PGPASSWORD`` or ``~/.pgpass``.
``DATA_INLINING_ROW_LIMIT 0``: DuckLake would otherwise keep small inserts inside the catalog
database instead of Parquet files; team rows always go to Parquet, which any engine can read
and which the privacy test scans byte by byte.

S3: a data path ``s3://bucket/prefix`` goes through DuckDB's ``httpfs`` extension (from the
``duckdb-extension-httpfs`` package, loaded the same way) with a temporary secret built from the
standard ``AWS_*`` variables: see ``workbench/team/s3.py``. Nothing secret is written to disk.

Tables (``TABLES``): every row names its ``author`` and carries a ``content_hash`` (sha256 of the
author and the published fields: publishing twice adds nothing) and its ``platform_source``.
``publish_marks`` is append-only: the high-water marks, per author, machine, table and project,
written in the same transaction as the rows they cover (see ``workbench/team/publish.py``).
Every table also has ``machine_id`` (``ADDED_COLUMNS``: added to an older lake when opened).
``publish_locks`` (``LOCK_TABLE``) makes two publishing runs of one author conflict.

A writer's connection (``create_tables``) first makes sure the catalog keeps no text in its
column statistics (``catalog_stats.ensure``): forgetting must be able to reach every copy.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import MissingDependency, WorkbenchError
from workbench.sections.team import conninfo
from workbench.team import catalog_stats, s3

if TYPE_CHECKING:
    import duckdb

    from workbench.settings import Settings

LAKE = "lake"

TABLES: dict[str, str] = {
    "sessions": """
        author VARCHAR NOT NULL, content_hash VARCHAR NOT NULL, local_id BIGINT NOT NULL,
        content_session_id VARCHAR NOT NULL, project VARCHAR NOT NULL,
        platform_source VARCHAR NOT NULL, status VARCHAR NOT NULL, started_at VARCHAR NOT NULL,
        started_at_epoch BIGINT NOT NULL, completed_at VARCHAR, completed_at_epoch BIGINT,
        prompt_counter INTEGER NOT NULL, published_at_epoch BIGINT NOT NULL
    """,
    "observations": """
        author VARCHAR NOT NULL, content_hash VARCHAR NOT NULL, local_id BIGINT NOT NULL,
        content_session_id VARCHAR, project VARCHAR NOT NULL, platform_source VARCHAR NOT NULL,
        prompt_number INTEGER NOT NULL, type VARCHAR NOT NULL, title VARCHAR NOT NULL,
        subtitle VARCHAR NOT NULL, narrative VARCHAR NOT NULL, facts VARCHAR[] NOT NULL,
        concepts VARCHAR[] NOT NULL, files_read VARCHAR[] NOT NULL,
        files_modified VARCHAR[] NOT NULL, discovery_tokens BIGINT NOT NULL,
        created_at VARCHAR NOT NULL, created_at_epoch BIGINT NOT NULL,
        generated_by VARCHAR NOT NULL, published_at_epoch BIGINT NOT NULL,
        deleted_at_epoch BIGINT
    """,
    "summaries": """
        author VARCHAR NOT NULL, content_hash VARCHAR NOT NULL, local_id BIGINT NOT NULL,
        content_session_id VARCHAR NOT NULL, project VARCHAR NOT NULL,
        platform_source VARCHAR NOT NULL, prompt_number INTEGER NOT NULL,
        request VARCHAR NOT NULL, investigated VARCHAR NOT NULL, learned VARCHAR NOT NULL,
        completed VARCHAR NOT NULL, next_steps VARCHAR NOT NULL, notes VARCHAR NOT NULL,
        files_read VARCHAR[] NOT NULL, files_edited VARCHAR[] NOT NULL,
        discovery_tokens BIGINT NOT NULL, created_at VARCHAR NOT NULL,
        created_at_epoch BIGINT NOT NULL, generated_by VARCHAR NOT NULL,
        published_at_epoch BIGINT NOT NULL
    """,
    "publish_marks": """
        author VARCHAR NOT NULL, table_name VARCHAR NOT NULL, project VARCHAR NOT NULL,
        mark BIGINT NOT NULL, published_at_epoch BIGINT NOT NULL
    """,
}
# One row per author that every publishing run deletes and re-inserts (``publish._claim``):
# two runs of one author delete the same row, so DuckLake refuses the second commit and the
# run is retried. Not in ``TABLES``: it holds no memory and gets no ``machine_id``.
LOCK_TABLE = "publish_locks"
LOCK_COLUMNS = "author VARCHAR NOT NULL, run_id VARCHAR NOT NULL, at_epoch BIGINT NOT NULL"
# Columns added after the first release, per table: ``connect`` adds the missing ones
# (ALTER TABLE … ADD COLUMN; rows written before hold NULL). ``machine_id``: which of the
# author's machines published the row or mark (``workbench/team/machine.py``).
ADDED_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = dict.fromkeys(
    TABLES, (("machine_id", "VARCHAR"),)
)


class TeamNotConfigured(WorkbenchError):
    """``team_catalog`` / ``team_data`` are unset."""

    status_code = 409
    code = "TEAM_NOT_CONFIGURED"


class LakeUnavailable(WorkbenchError):
    """The catalog did not answer, or the lake could not be attached."""

    status_code = 503
    code = "LAKE_UNAVAILABLE"


def extension_file(package: str, name: str) -> Path:
    """The ``<name>.duckdb_extension`` file the pip ``package`` ships for the running duckdb."""
    import duckdb

    dist = package.replace("_", "-")
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        raise MissingDependency(f"{dist}=={duckdb.__version__}", "team memory") from None
    path = Path(str(root)) / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not path.is_file():
        raise WorkbenchError(
            f"duckdb {duckdb.__version__} needs the {name} extension built for it, but {dist} "
            f"has none for that version. Install matching versions: pip install "
            f"'duckdb=={duckdb.__version__}' '{dist}=={duckdb.__version__}'"
        )
    return path


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def require_configured(settings: Settings) -> tuple[str, str]:
    """(catalog, data path) or ``TeamNotConfigured`` saying how to set them."""
    if not settings.team_catalog or not settings.team_data:
        raise TeamNotConfigured(
            "no team lake configured; run: workbench team init --catalog "
            "postgres://USER@HOST:PORT/DBNAME --data <shared dir or s3://bucket/prefix>"
        )
    return settings.team_catalog, settings.team_data


def connect(
    settings: Settings, *, create_tables: bool = True, connect_timeout_s: int | None = None
) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with the team lake attached as ``lake`` (and its tables made).

    ``connect_timeout_s`` bounds libpq's wait for the catalog (doctor, context injection: a
    host that drops packets must not hang them); a ``connect_timeout`` in the URL wins.
    """
    import duckdb

    catalog, data = require_configured(settings)
    con = _duckdb()
    try:
        for package, name in (
            ("duckdb_extension_postgres_scanner", "postgres_scanner"),
            ("duckdb_extension_ducklake", "ducklake"),
        ):
            con.execute(f"LOAD {_quote(str(extension_file(package, name)))}")
        if data.startswith("s3://"):
            _setup_s3(con, data)
        else:
            Path(data).mkdir(parents=True, exist_ok=True)
        target = "ducklake:postgres:" + conninfo(catalog)
        if connect_timeout_s is not None and "connect_timeout=" not in target:
            target += f" connect_timeout={int(connect_timeout_s)}"
        try:
            con.execute(
                f"ATTACH {_quote(target)} AS {LAKE} "
                f"(DATA_PATH {_quote(data)}, DATA_INLINING_ROW_LIMIT 0)"
            )
        except duckdb.Error as exc:
            raise LakeUnavailable(
                f"cannot open the team lake at {catalog} ({_first_line(exc)}); check the "
                "server is up and the database exists, and give the password through "
                "PGPASSWORD or ~/.pgpass"
            ) from None
        if create_tables:
            # Before any row is written: the catalog must not keep words of it as statistics.
            catalog_stats.ensure(con, LAKE)
            _create_missing_tables(con)
            _add_missing_columns(con)
    except BaseException:
        con.close()
        raise
    return con


def _duckdb() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that loads extensions only from the files we name."""
    import duckdb

    return duckdb.connect(
        ":memory:",
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_unsigned_extensions": True,  # files pip installed and hash-checked
        },
    )


def _setup_s3(con: Any, data: str) -> None:
    s3.setup(con, data, os.environ, str(extension_file("duckdb_extension_httpfs", "httpfs")))


def _create_missing_tables(con: Any) -> None:
    """Create the tables the lake lacks, in one transaction (one snapshot); none when all exist.

    Two first publishers may race to create them: the loser's commit conflicts, and by then the
    tables exist, which is all that was wanted.
    """
    import duckdb

    present = {
        row[0]
        for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [LAKE]
        ).fetchall()
    }
    wanted = {**TABLES, LOCK_TABLE: LOCK_COLUMNS}
    missing = [t for t in wanted if t not in present]
    if not missing:
        return
    con.execute("BEGIN")
    try:
        for table in missing:
            con.execute(f"CREATE TABLE IF NOT EXISTS {LAKE}.{table} ({wanted[table]})")
        con.execute("COMMIT")
    except duckdb.TransactionException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # the failed commit already rolled back
            pass


def _add_missing_columns(con: Any) -> None:
    """Upgrade a lake made by an older release: add ``ADDED_COLUMNS`` it lacks, in one
    transaction. A concurrent upgrader's commit may conflict with ours; then it added them."""
    import duckdb

    present = {
        (row[0], row[1])
        for row in con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = ?",
            [LAKE],
        ).fetchall()
    }
    missing = [
        (table, column, kind)
        for table, columns in ADDED_COLUMNS.items()
        for column, kind in columns
        if (table, column) not in present
    ]
    if not missing:
        return
    con.execute("BEGIN")
    try:
        for table, column, kind in missing:
            con.execute(f"ALTER TABLE {LAKE}.{table} ADD COLUMN IF NOT EXISTS {column} {kind}")
        con.execute("COMMIT")
    except duckdb.TransactionException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # the failed commit already rolled back
            pass


def storage_error(data: str, exc: BaseException) -> LakeUnavailable:
    """A failure reading or writing the data path (no such bucket, server down, disk full).

    DuckDB's message ends in SQL context lines (``LINE 1: …``) that say nothing to a user: the
    lines before them are kept (for S3 they include the server's error code, e.g.
    ``NoSuchBucket``).
    """
    lines = []
    for line in str(exc).strip().splitlines():
        if line.startswith("LINE "):
            break
        if line.strip():
            lines.append(line.strip())
    hint = (
        "check that the bucket exists, AWS_ENDPOINT_URL (a server other than AWS) and the "
        "AWS_* credentials"
        if data.startswith("s3://")
        else "check that the directory is mounted and writable"
    )
    return LakeUnavailable(
        f"cannot use the team data path {data} ({' '.join(lines) or type(exc).__name__}); "
        f"{hint}, then run the command again"
    )


def check_data_path(settings: Settings) -> None:
    """List an S3 data path once, before ``team init`` attaches (and so records) it.

    A missing bucket or an unreachable server is refused with ``storage_error`` instead of
    being stored in the settings and in the catalog. A directory needs no check (made by
    ``connect``).
    """
    import duckdb

    _, data = require_configured(settings)
    if not data.startswith("s3://"):
        return
    con = _duckdb()
    try:
        _setup_s3(con, data)
        con.execute("SELECT count(*) FROM glob(?)", [data.rstrip("/") + "/**"]).fetchone()
    except duckdb.IOException as exc:
        raise storage_error(data, exc) from None
    finally:
        con.close()


def current_snapshot(con: Any) -> int:
    """The lake's newest snapshot id."""
    return int(con.execute(f"SELECT max(snapshot_id) FROM {LAKE}.snapshots()").fetchone()[0])


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
