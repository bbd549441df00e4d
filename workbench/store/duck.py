"""DuckDB over the SQLite store, read-only, offline: the views every analysis starts from.

Why DuckDB: columnar GROUP BYs over 100k observations in tens of milliseconds, lists and
``UNNEST`` for the JSON array columns, and zero-copy hand-off to polars/Arrow.

How (route A of ENVIRONMENT.md): the ``sqlite_scanner`` extension comes from the pip package
``duckdb-extension-sqlite-scanner`` (pinned to duckdb's version) and is loaded **by file path**
with ``autoinstall_known_extensions`` and ``autoload_known_extensions`` off, so DuckDB never
tries ``INSTALL`` (which downloads, and fails offline after seconds). The store is attached as
catalog ``store``; the views below expose its tables with JSON arrays as ``VARCHAR[]``.

Read-only, in four layers, because the memory is canonical and must never be written here:

1. **One statement, and a SELECT** (as DuckDB's own parser classifies it: ``FROM``, ``WITH``,
   ``SHOW``, ``DESCRIBE`` and ``SUMMARIZE`` are SELECTs; INSERT, DELETE, ATTACH, COPY, SET,
   PRAGMA, CALL, LOAD… are not). Needed beyond layer 4: the sqlite extension opens files
   through SQLite, not DuckDB's file system, so ``ATTACH 'x.db' (TYPE sqlite)`` — read-write —
   still works with external access disabled (measured on 1.5.5).
2. **Only the views can be read**, proved on the statement's parse tree
   (``json_serialize_sql``), by allow-list, not by matching text or names of bad functions:
   every table reference must be a view (or a CTE the statement defines, named as a plain
   identifier), unqualified — no ``store.events``, no ``'file.csv'``; every table function
   must be one that makes rows out of its arguments (``range``, ``generate_series``,
   ``unnest``) — so ``sqlite_scan``, ``read_csv``, ``query``, ``query_table`` and
   ``json_execute_serialized_sql`` (SQL smuggled in a string, which a tree walk cannot see)
   all fail the same one rule, as will any table function a later DuckDB adds; ``SHOW`` only
   over those views. A statement whose tree cannot be produced is refused. Python
   replacement scans are off, so a name never resolves to a variable of the caller.
3. **The SQLite file is attached READ_ONLY**: SQLite itself refuses any write on that handle
   (``sqlite_query(... 'DELETE … RETURNING')`` fails with "attempt to write a readonly
   database"), whatever got past 1 and 2.
4. **No file access for DuckDB**: ``enable_external_access=false`` (no COPY TO, EXPORT, file
   reads, INSTALL, LOAD of another file) is set right after loading the extension and
   *before* attaching the store, with no temp directory: DuckDB allow-lists the files of
   databases attached while access is on (the store, its ``.wal`` siblings, ``./.tmp/``), and
   a raw ``COPY (SELECT 1) TO '<store>' (USE_TMP_FILE false)`` then overwrote the store
   (measured on 1.5.5). ``lock_configuration=true`` last, so no SET can undo any of it.

Never in the process that writes the store: the extension is a second SQLite library, and two
in one process corrupt the file (``report_worker`` says why). The service declares its store
with ``refuse_in_this_process`` and ``connect`` then refuses it; its reports run in a child.

duckdb is imported inside the functions (``workbench --help`` and the hooks never pay for it).
"""

from __future__ import annotations

import importlib.resources
import json
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import MissingDependency, NotFound, WorkbenchError

if TYPE_CHECKING:
    import duckdb
    import pyarrow

EXTENSION_PACKAGE = "duckdb_extension_sqlite_scanner"
# The team lake's tables, present only when ``connect(team=…)`` registered them (sql --team).
TEAM_VIEWS = ("team_sessions", "team_observations", "team_summaries")
CATALOG = "store"
REQUIRED_TABLES = (
    "sessions",
    "user_prompts",
    "observations",
    "session_summaries",
    "injections",
    "injection_items",
    "fetches",
    "observation_evidence",
    "observation_staleness",
)
# Table functions a user's query may call (layer 2): they make rows from their arguments
# and read nothing. Every other table function is refused, whatever it is called.
ALLOWED_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
# Also refused as scalar calls anywhere (belt and braces under the allow-list above).
REFUSED_FUNCTIONS = frozenset(
    {
        "sqlite_attach",
        "sqlite_scan",
        "sqlite_query",
        "query",
        "query_table",
        "checkpoint",
        "force_checkpoint",
        "json_execute_serialized_sql",
        "getenv",
    }
)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_LIST = "from_json({col}, '[\"VARCHAR\"]') AS {col}"


def _lists(*cols: str) -> str:
    return ", ".join(_LIST.format(col=c) for c in cols)


_SESSION_PLATFORM = (
    f"(SELECT s.platform_source FROM {CATALOG}.sessions AS s"
    " WHERE s.content_session_id = r.content_session_id)"
)

# ``SELECT * REPLACE`` keeps columns a later migration adds; the views are re-bound per query.
VIEWS: dict[str, str] = {
    "observations": (
        f"SELECT * REPLACE ({_lists('facts', 'concepts', 'files_read', 'files_modified')}),"
        " epoch_ms(created_at_epoch) AS created_ts,"
        " CAST(epoch_ms(created_at_epoch) AS DATE) AS day"
        f" FROM {CATALOG}.observations"
    ),
    "sessions": (
        "SELECT *, epoch_ms(started_at_epoch) AS started_ts,"
        " epoch_ms(completed_at_epoch) AS completed_ts,"
        " CAST(epoch_ms(started_at_epoch) AS DATE) AS day"
        f" FROM {CATALOG}.sessions"
    ),
    # Prompts and summaries have no platform column: they take their session's, so every
    # statistic filters and groups by platform_source the same way on every view.
    "prompts": (
        "SELECT *, epoch_ms(created_at_epoch) AS created_ts,"
        " CAST(epoch_ms(created_at_epoch) AS DATE) AS day,"
        f" {_SESSION_PLATFORM} AS platform_source"
        f" FROM {CATALOG}.user_prompts AS r"
    ),
    "summaries": (
        f"SELECT * REPLACE ({_lists('files_read', 'files_edited')}),"
        " epoch_ms(created_at_epoch) AS created_ts,"
        " CAST(epoch_ms(created_at_epoch) AS DATE) AS day,"
        f" {_SESSION_PLATFORM} AS platform_source"
        f" FROM {CATALOG}.session_summaries AS r"
    ),
    "injections": (f"SELECT *, epoch_ms(created_at_epoch) AS created_ts FROM {CATALOG}.injections"),
    # A WITHOUT ROWID table: the scanner's own scan needs ROWID for ``count(*)``, so read it
    # through SQLite directly (small: one row per observation shown).
    "injection_items": (
        "SELECT CAST(injection_id AS BIGINT) AS injection_id,"
        " CAST(observation_id AS BIGINT) AS observation_id, CAST(shown AS VARCHAR) AS shown"
        f" FROM sqlite_query('{CATALOG}',"
        " 'SELECT injection_id, observation_id, shown FROM injection_items')"
    ),
    "fetches": f"SELECT *, epoch_ms(created_at_epoch) AS created_ts FROM {CATALOG}.fetches",
    # Staleness (issue 22 item 5, ``workbench.staleness``): what each observation's cited
    # files were at capture, and the verdicts of the last check (``workbench stale``; DuckDB
    # cannot read the files, so it shows that check, ``checked_ts`` says when).
    "evidence": f"SELECT * FROM {CATALOG}.observation_evidence",
    "staleness": (
        "SELECT s.observation_id, o.project, o.type, o.title,"
        " epoch_ms(o.created_at_epoch) AS created_ts, CAST(s.stale AS BOOLEAN) AS stale,"
        " from_json(s.changed_files, '[\"VARCHAR\"]') AS changed_files,"
        " epoch_ms(s.checked_at_epoch) AS checked_ts"
        f" FROM {CATALOG}.observation_staleness AS s"
        f" JOIN {CATALOG}.observations AS o ON o.id = s.observation_id"
    ),
}


class ReadOnlyViolation(WorkbenchError):
    """A query that could write, or that the read-only checks cannot vouch for."""

    code = "READ_ONLY"


class QueryFailed(WorkbenchError):
    """DuckDB refused a (read-only) query: a syntax error, an unknown column…"""

    code = "QUERY_FAILED"


def extension_path() -> Path:
    """The ``sqlite_scanner`` file shipped by the pip package for the running duckdb version."""
    import duckdb

    try:
        root = importlib.resources.files(EXTENSION_PACKAGE)
    except ModuleNotFoundError:
        raise MissingDependency(
            f"duckdb-extension-sqlite-scanner=={duckdb.__version__}", "DuckDB analytics"
        ) from None
    path = (
        Path(str(root))
        / "extensions"
        / f"v{duckdb.__version__}"
        / "sqlite_scanner.duckdb_extension"
    )
    if not path.is_file():
        shipped = sorted(p.parent.name for p in Path(str(root)).glob("extensions/*/*"))
        raise WorkbenchError(
            f"duckdb {duckdb.__version__} needs the sqlite_scanner extension built for it, but "
            f"the installed duckdb-extension-sqlite-scanner ships {shipped or 'none'}. Install "
            f"matching versions: pip install 'duckdb=={duckdb.__version__}' "
            f"'duckdb-extension-sqlite-scanner=={duckdb.__version__}'"
        )
    return path


def connect(
    db_path: Path | str,
    *,
    extension_dir: Path | str | None = None,
    verify_signature: bool = False,
    team: dict[str, Any] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with the store attached read-only, the views, and the lock on.

    ``team``: Arrow tables named ``TEAM_VIEWS`` (``workbench sql --team``), read from the
    lake by a connection of their own (``workbench/team/read.py``) and registered here as
    in-memory relations: the sandbox never attaches the lake, so none of its four layers moves
    (the lake's files are never allow-listed, no extension but sqlite is loaded).

    ``extension_dir`` is where DuckDB would look for installed extensions; nothing is ever
    read or written there (tests pass an empty directory to prove it). ``verify_signature``:
    Trigger: loading the 34 MB extension with signature checking takes ~240 ms (it hashes the
    file) / Why: the file is the one pip installed and hash-checked from the wheel's RECORD,
    as trusted as duckdb itself, and no other extension can be loaded once the configuration
    is locked / Outcome: off by default; pass True to have DuckDB verify it anyway.
    """
    import duckdb

    path = Path(db_path).resolve()
    if not path.is_file():
        raise NotFound(
            f"no workbench database at {path}; start the service once (workbench serve) or "
            "point WORKBENCH_DATA_DIR (--data-dir) at your data dir"
        )
    st = path.stat()
    if (st.st_dev, st.st_ino) in _refused:
        raise WorkbenchError(
            f"{path} is written by this process (the service), so DuckDB's own SQLite must not "
            "open it here: two SQLite libraries in one process corrupt the database. Run the "
            "query in another process (workbench sql, workbench stats, /api/stats/*)"
        )
    config: dict[str, Any] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_unsigned_extensions": not verify_signature,
        "temp_directory": "",  # no spilling to disk: nothing to allow-list (layer 4)
        "python_enable_replacements": False,  # a table name is never a caller's variable
    }
    if extension_dir is not None:
        config["extension_directory"] = str(extension_dir)
    con = duckdb.connect(":memory:", config=config)
    try:
        con.execute(f"LOAD {_quote(str(extension_path()))}")
        # Layer 4, before ATTACH: the store's path must not be allow-listed.
        con.execute("SET enable_external_access = false")
        try:
            con.execute(f"ATTACH {_quote(str(path))} AS {CATALOG} (TYPE sqlite, READ_ONLY)")
            present = {
                r[0]
                for r in con.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [CATALOG]
                ).fetchall()
            }
        except duckdb.Error as exc:
            raise WorkbenchError(
                f"cannot read {path} as a SQLite database ({_first_line(exc)}); point "
                "WORKBENCH_DATA_DIR at a workbench data dir"
            ) from None
        missing = [t for t in REQUIRED_TABLES if t not in present]
        if missing:
            raise WorkbenchError(
                f"database {path} has no {', '.join(missing)} table(s): it was never migrated "
                "by this workbench version. Start the service once (workbench serve) to "
                "migrate it, then retry."
            )
        for name, sql in VIEWS.items():
            con.execute(f"CREATE VIEW {name} AS {sql}")
        for name, rows in (team or {}).items():
            if name not in TEAM_VIEWS:
                raise ValueError(f"{name!r} is not one of the team views {TEAM_VIEWS}")
            con.register(name, rows)
        con.execute("SET lock_configuration = true")  # from here on no setting can change
    except BaseException:
        con.close()
        raise
    return con


# Files (device, inode) this process writes through Python's sqlite3: the service's store.
# DuckDB's sqlite extension is a second SQLite library, and two in one process corrupt the
# file (``report_worker`` says why), so ``connect`` refuses them here; reports on them run in
# the analytics child (``report_process``).
_refused: set[tuple[int, int]] = set()
_refused_lock = threading.Lock()


def refuse_in_this_process(db_path: Path | str) -> None:
    """From now on ``connect`` refuses ``db_path`` in this process (the service calls this as
    it opens the store for writing)."""
    st = Path(db_path).stat()
    with _refused_lock:
        _refused.add((st.st_dev, st.st_ino))


def allow_in_this_process(db_path: Path | str) -> None:
    """Undo ``refuse_in_this_process`` (the service has closed its store)."""
    try:
        st = Path(db_path).stat()
    except OSError:
        return
    with _refused_lock:
        _refused.discard((st.st_dev, st.st_ino))


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """Return the one statement in ``sql`` if it can only read; else ``ReadOnlyViolation``."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryFailed(f"DuckDB could not parse the query: {_first_line(exc)}") from None
    if len(statements) != 1:
        raise ReadOnlyViolation(
            f"workbench sql runs exactly one statement; got {len(statements)}. "
            "Run them one at a time."
        )
    statement = statements[0]
    kind = statement.type.name
    if kind != "SELECT":
        raise ReadOnlyViolation(
            f"workbench sql only reads: {_verb(statement.query, kind)} statements are refused. "
            "The memory changes only "
            "through the service (the hooks, workbench import, the HTTP API). Use SELECT, "
            "FROM, WITH, SHOW, DESCRIBE or SUMMARIZE on the views: " + ", ".join(VIEWS) + "."
        )
    tree = json.loads(
        con.execute("SELECT json_serialize_sql(?)", [statement.query]).fetchone()[0]  # type: ignore[index]
    )
    if tree.get("error"):
        raise ReadOnlyViolation(
            "workbench sql could not check this statement "
            f"({tree.get('error_message', 'no parse tree')}), so it is refused. "
            "Write it as a plain SELECT over the views."
        )
    outside = _outside_the_views(tree)
    if outside:
        raise ReadOnlyViolation(
            f"workbench sql reads only the views {', '.join(VIEWS)}; it refuses "
            f"{', '.join(outside)}: that reaches outside them (another table or file, or SQL "
            "built at run time). Query the views by name (DESCRIBE <view> lists the columns)."
        )
    return str(statement.query)


def execute(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyConnection:
    """Check then run one user query; fetch from the returned connection (``fetchall()``,
    ``description``, ``to_arrow_table()``, ``pl()``).

    The CLI fetches plain rows this way, which spares it the pyarrow import (~150 ms CPU).
    """
    import duckdb

    statement = check_read_only(con, sql)
    try:
        return con.execute(statement)
    except duckdb.Error as exc:
        raise QueryFailed(
            f"DuckDB could not run the query: {_first_line(exc)}. "
            f"Views: {', '.join(VIEWS)} (DESCRIBE <view> lists the columns)."
        ) from None


def run_sql(con: duckdb.DuckDBPyConnection, sql: str) -> pyarrow.Table:
    """Check then run one user query; the result as an Arrow table."""
    return execute(con, sql).to_arrow_table()


def _verb(query: str, kind: str) -> str:
    """The statement's own first word for the message (``INSTALL``, not its type ``LOAD``)."""
    words = query.split(None, 1)
    first = words[0].upper() if words else kind
    return first if first.isalpha() and first not in {"WITH", "FROM"} else kind


def _outside_the_views(tree: Any) -> list[str]:
    """What in a ``json_serialize_sql`` tree reads anything but the views; empty when nothing.

    Walks every node: table references (``BASE_TABLE``, ``TABLE_FUNCTION``, ``SHOW_REF``) are
    checked against the allow-lists; every function call against ``REFUSED_FUNCTIONS``.
    """
    ctes: set[str] = set()
    refs: list[dict[str, Any]] = []
    problems: list[str] = []
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
            continue
        if not isinstance(item, dict):
            continue
        stack.extend(item.values())
        cte_map = item.get("cte_map")
        if isinstance(cte_map, dict):
            for entry in cte_map.get("map") or []:
                key = str(entry.get("key", ""))
                if _IDENTIFIER.match(key):
                    ctes.add(key.lower())
                else:
                    problems.append(f"the CTE name {key!r} (use a plain identifier)")
        name = item.get("function_name")
        if isinstance(name, str) and name.lower() in REFUSED_FUNCTIONS:
            problems.append(f"{name.lower()}()")
        if "class" not in item and item.get("type") in ("BASE_TABLE", "TABLE_FUNCTION", "SHOW_REF"):
            refs.append(item)
    views = {v.lower() for v in (*VIEWS, *TEAM_VIEWS)}
    for ref in refs:
        kind = ref["type"]
        if kind == "BASE_TABLE":
            table = str(ref.get("table_name", ""))
            catalog, schema = ref.get("catalog_name") or "", ref.get("schema_name") or ""
            qualified = ".".join(p for p in (catalog, schema, table) if p)
            if catalog or schema not in ("", "main") or table.lower() not in views | ctes:
                problems.append(f"the table {qualified!r}")
        elif kind == "TABLE_FUNCTION":
            function = ref.get("function") or {}
            fname = str(function.get("function_name", "?")).lower()
            if (
                fname not in ALLOWED_TABLE_FUNCTIONS
                or function.get("schema")
                or function.get("catalog")
            ):
                problems.append(f"the table function {fname}()")
        elif ref.get("query") is None and not (
            ref.get("show_type") == "SHOW_UNQUALIFIED"
            and str(ref.get("table_name", "")).strip('"').lower() == "tables"
        ):
            problems.append(f"SHOW {str(ref.get('table_name', '')).strip(chr(34))}")
    return sorted(set(problems))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
