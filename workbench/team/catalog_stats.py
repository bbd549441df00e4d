"""Keep text out of the catalog's column statistics (PostgreSQL), so forgetting can reach it.

DuckLake records, per data file and per table, the min and max value of every column
(``ducklake_file_column_stats``, ``ducklake_table_column_stats``:
https://ducklake.select/docs/stable/specification/tables/ducklake_file_column_stats). For a
text column those are whole values of the memory: a title, a narrative, a summary's
``learned``. They outlive the rows (a tombstone or a superseded summary only hides a row; the
statistics of the file it sat in stay until the file goes), they sit in PostgreSQL's heap and
WAL where no ``team maintain`` reaches, and a colleague with catalog access reads them in
clear. The DuckLake release we pin has no option to skip them (``skip_stats_columns`` comes
later), so the catalog itself refuses them:

- ``ensure`` installs (once per catalog, checked by name) a ``BEFORE INSERT OR UPDATE``
  trigger on both tables that blanks ``min_value``, ``max_value`` and ``extra_stats`` of any
  column whose DuckLake type is not a number, a date/time or a boolean. The text never
  reaches a PostgreSQL page or the WAL. The spec allows it: min/max are optional bounds, and
  a column without them is simply scanned (counts and null flags stay).
  Installing also blanks the text statistics a lake made by an older release already holds.
- ``vacuum`` rewrites both tables (``VACUUM FULL``) so the old row versions of those blanked
  rows leave the table files; ``workbench team maintain`` runs it. PostgreSQL's WAL segments
  written before the trigger existed are recycled by PostgreSQL itself, not by us (the forget
  report says so).

Both go through ``postgres_execute`` on DuckLake's own metadata connection
(``__ducklake_metadata_<lake>``), so no second PostgreSQL client or credential is needed.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import WorkbenchError

NAME = "workbench_no_text_stats_v1"
LOCK_KEY = 0x776F726B62656E63  # "workbenc": the install's advisory lock
STATS_TABLES = ("ducklake_file_column_stats", "ducklake_table_column_stats")
# DuckLake column types whose min/max are numbers or instants, never words.
KEPT_TYPES = (
    r"^(u?int(8|16|32|64|128)|float(32|64)|decimal.*|date|time.*|timestamp.*|boolean|interval)$"
)

_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {NAME}() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE kind text;
BEGIN
  EXECUTE format('SELECT column_type FROM %I.ducklake_column'
                 ' WHERE table_id = $1 AND column_id = $2 LIMIT 1', TG_TABLE_SCHEMA)
    INTO kind USING NEW.table_id, NEW.column_id;
  IF kind IS NULL OR kind !~ '{KEPT_TYPES}' THEN
    NEW.min_value := NULL;
    NEW.max_value := NULL;
    NEW.extra_stats := NULL;
  END IF;
  RETURN NEW;
END $fn$
"""


class CatalogStatsUnprotected(WorkbenchError):
    """The catalog would keep text statistics and the guard could not be installed."""

    status_code = 503
    code = "CATALOG_STATS_UNPROTECTED"


def _metadata(lake: str) -> str:
    return f"__ducklake_metadata_{lake}"


def _execute(con: Any, lake: str, sql: str, *, in_transaction: bool = True) -> None:
    """Run ``sql`` on the catalog (``VACUUM`` needs ``in_transaction=False``)."""
    con.execute(
        f"CALL postgres_execute(?, ?, use_transaction => {str(in_transaction).lower()})",
        [_metadata(lake), sql],
    )


def installed(con: Any, lake: str) -> bool:
    """Whether both tables carry the trigger."""
    sql = f"SELECT count(*) FROM pg_trigger WHERE tgname = '{NAME}' AND NOT tgisinternal"
    row = con.execute("SELECT * FROM postgres_query(?, ?)", [_metadata(lake), sql]).fetchone()
    return bool(row) and int(row[0]) >= len(STATS_TABLES)


def ensure(con: Any, lake: str) -> None:
    """Install the trigger (and blank text statistics already stored) unless it is there."""
    import duckdb

    try:
        if installed(con, lake):
            return
        # Two first publishers may install at once: PostgreSQL refuses concurrent
        # CREATE OR REPLACE FUNCTION ("tuple concurrently updated"), so the install takes a
        # transaction-scoped advisory lock first; the second one then redoes the same install.
        statements = [f"SELECT pg_advisory_xact_lock({LOCK_KEY})", _FUNCTION]
        for table in STATS_TABLES:
            statements += [
                f"DROP TRIGGER IF EXISTS {NAME} ON {table}",
                f"CREATE TRIGGER {NAME} BEFORE INSERT OR UPDATE ON {table}"
                f" FOR EACH ROW EXECUTE FUNCTION {NAME}()",
                # Fires the trigger on every stored row: text bounds written before it go.
                f"UPDATE {table} SET min_value = min_value WHERE min_value IS NOT NULL"
                " OR max_value IS NOT NULL",
            ]
        _execute(con, lake, "; ".join(statements))  # one transaction (postgres_execute's)
    except duckdb.Error as exc:
        raise CatalogStatsUnprotected(
            "the team catalog would keep words of published memory in its column statistics "
            f"and workbench could not stop it ({str(exc).strip().splitlines()[0]}); give the "
            "catalog user the right to create functions and triggers in its schema (it owns "
            "the DuckLake tables), then run the command again"
        ) from None


def vacuum(con: Any, lake: str) -> bool:
    """``VACUUM FULL`` both statistics tables; False when PostgreSQL refused (reported)."""
    import duckdb

    try:
        for table in STATS_TABLES:
            _execute(con, lake, f"VACUUM FULL {table}", in_transaction=False)
    except duckdb.Error:
        return False
    return True
