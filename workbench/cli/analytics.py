"""``workbench sql`` and ``workbench stats``: analyse the memory without the service.

Both only read, so they open the database themselves (read-only DuckDB, ``store.duck``)
instead of asking the service: they work when it is down, and cannot compete with its writes.
``sql`` refuses anything that is not one SELECT (``duck.check_read_only``) and exits 1 with the
reason. duckdb, polars, pyarrow (and settings, which pulls in pydantic-settings) are imported
inside the commands, so registering them costs ``workbench --help`` nothing.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from workbench.cli.output import DataDirOption, JsonOption, handle_errors, print_json, table
from workbench.errors import InvalidInput

if TYPE_CHECKING:
    import pyarrow

    from workbench.settings import Settings
    from workbench.sources.tables import Tables


class Statistic(StrEnum):
    """The names of ``knowledge.reports.REPORTS`` (a test keeps the two equal)."""

    economics = "economics"
    types = "types"
    activity = "activity"
    files = "files"
    concepts = "concepts"
    cooccurrence = "cooccurrence"
    sessions = "sessions"
    roi = "roi"


def register(app: typer.Typer) -> None:
    app.command("sql")(sql)
    app.command("stats")(stats)


@handle_errors
def sql(
    query: Annotated[
        str,
        typer.Argument(
            help='One SELECT, e.g. "SELECT project, type, count(*) FROM observations GROUP BY '
            'ALL". Views: observations, sessions, prompts, summaries, injections, '
            "injection_items, fetches, evidence, staleness (as of the last `workbench "
            "stale`). '-' reads the query from stdin."
        ),
    ],
    as_json: JsonOption = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table.")] = False,
    parquet: Annotated[
        Path | None, typer.Option("--parquet", help="Write the result to this Parquet file.")
    ] = None,
    max_rows: Annotated[
        int, typer.Option(min=1, help="Rows shown in the table (JSON/CSV/Parquet get all).")
    ] = 100,
    team: Annotated[
        bool,
        typer.Option(
            "--team",
            help="Add the team lake's tables as team_observations, team_sessions, "
            "team_summaries (workbench team init).",
        ),
    ] = False,
    at_snapshot: Annotated[
        int | None,
        typer.Option("--at-snapshot", min=0, help="With --team: read the lake as of snapshot N."),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Run one read-only DuckDB SELECT over the memory; writes are refused.

    \b
    Examples:
      workbench sql "SELECT type, count(*) AS n FROM observations GROUP BY ALL ORDER BY n DESC"
      workbench sql "SELECT unnest(concepts) AS concept FROM observations" --csv
      workbench sql "FROM sessions" --parquet sessions.parquet
      workbench sql --team "SELECT author, count(*) FROM team_observations GROUP BY ALL"
      workbench sql --team --at-snapshot 3 "SELECT count(*) FROM team_observations"
    """
    from workbench.settings import load_settings
    from workbench.store import duck

    if sum((as_json, as_csv, parquet is not None)) > 1:
        raise InvalidInput("choose one output: --json, --csv or --parquet FILE")
    text = sys.stdin.read() if query == "-" else query
    con = source_for(load_settings(data_dir), team, at_snapshot).sandbox()
    try:
        result = duck.execute(con, text)
        if parquet is not None:
            arrow = result.to_arrow_table()
            _write_parquet(arrow, parquet)
            typer.echo(f"wrote {arrow.num_rows} rows, {arrow.num_columns} columns to {parquet}")
            return
        columns = [d[0] for d in result.description or []]
        rows = result.fetchall()
    finally:
        con.close()
    if as_json:
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        sys.stdout.write(json.dumps(records, ensure_ascii=False, default=_plain) + "\n")
    elif as_csv:
        _write_csv(columns, rows)
    else:
        _print_table(columns, rows, max_rows)


def source_for(settings: Settings, team: bool, at_snapshot: int | None) -> Tables:
    """The rows a command reads: this store's, or with ``--team`` the team lake's too (as of
    ``--at-snapshot``, which only the lake has)."""
    from workbench.sources.tables import LocalTables

    if at_snapshot is not None and not team:
        raise InvalidInput("--at-snapshot reads the team lake: add --team")
    if not team:
        return LocalTables(settings)
    from workbench.team.tables import TeamTables

    return TeamTables(settings, at_snapshot)


@handle_errors
def stats(
    kind: Annotated[
        Statistic, typer.Argument(help="Which statistic.", case_sensitive=False)
    ] = Statistic.economics,
    project: Annotated[str | None, typer.Option(help="Only this project.")] = None,
    date_start: Annotated[
        str | None, typer.Option("--since", "--date-start", help="From this ISO date/time.")
    ] = None,
    date_end: Annotated[
        str | None,
        typer.Option("--until", "--date-end", help="Up to this ISO date (the whole day) or time."),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            help="economics: project | type | day | platform_source; "
            "activity: day | project | platform_source; with --team, economics, types and "
            "activity also take author (you as 'me', each colleague by id)."
        ),
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform-source",
            "--platform",  # the old spelling, kept for one release (README: one spelling each)
            help="Only this agent platform (claude-code, gemini-cli, codex-cli…).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Rows for files, concepts, cooccurrence, …")
    ] = None,
    team: Annotated[
        bool,
        typer.Option(
            "--team",
            help="economics, types, activity: your store and the team lake together "
            "(workbench team init).",
        ),
    ] = False,
    as_json: JsonOption = False,
    data_dir: DataDirOption = None,
) -> None:
    """Memory statistics: token economics, types, activity, files, concepts, sessions, ROI.

    \b
    Examples:
      workbench stats                      # read vs discovery tokens per project
      workbench stats economics --by day --since 2026-11-01
      workbench stats cooccurrence --limit 10 --json
      workbench stats activity --by platform_source --platform gemini-cli
      workbench stats economics --team --by author
    """
    from workbench.knowledge import reports
    from workbench.knowledge.stats import Scope
    from workbench.settings import load_settings

    settings = load_settings(data_dir)
    scope = Scope.parse(project, date_start, date_end, platform)
    tables = source_for(settings, team, None)
    con = tables.views(kind.value)
    try:
        report = reports.report(con, kind.value, scope, by=by, limit=limit)
    finally:
        con.close()
    if as_json:
        print_json(report.to_json())
        return
    heading = kind.value + (f" by {by}" if by else "") + (f" · {project}" if project else "")
    heading += f" · {scope.platform_source}" if scope.platform_source else ""
    heading += tables.label
    rows = report.frame.iter_rows()
    table(heading, report.frame.columns, ([_cell(v) for v in row] for row in rows))
    if report.summary:
        table("summary", list(report.summary), [[_cell(v) for v in report.summary.values()]])


# ----- output ----------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """JSON for what Arrow hands back beyond JSON's types."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=_plain)
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else str(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, date | time):
        return value.isoformat()
    return str(value)


def _print_table(columns: list[str], rows: list[tuple[Any, ...]], max_rows: int) -> None:
    title = f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
    table(title, columns, ([_cell(v) for v in row] for row in rows[:max_rows]))
    if len(rows) > max_rows:
        typer.echo(
            f"showing the first {max_rows} of {len(rows)} rows; use --max-rows, --json, "
            "--csv or --parquet FILE for more",
            err=True,
        )


def _write_csv(columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(v) for v in row])


def _csv_cell(value: Any) -> Any:
    """CSV has no lists: nested values become JSON text; times ISO-8601."""
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, default=_plain)
    if isinstance(value, str | int | float | bool):
        return value
    return _plain(value)


def _write_parquet(result: pyarrow.Table, path: Path) -> None:
    """Write beside the target, then rename: a reader never sees half a file."""
    import pyarrow.parquet as pq

    path = path.expanduser()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(result, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
