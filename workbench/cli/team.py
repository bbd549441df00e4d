"""``workbench team init|status|allow|deny|maintain`` and ``workbench publish``: the write side.

Settings go through ``workbench.settings.write_settings_file`` (the one settings module), so a
bad catalog or data path is refused with the same message as in ``settings.json``. The catalog
URL never holds a password: libpq reads ``PGPASSWORD`` or ``~/.pgpass``. Publishing reads the
store read-only (the service stays its one writer) and writes the lake in one transaction
(``workbench/team/publish.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    key_values,
    load_settings,
    print_json,
    table,
)
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.settings import Settings

team_app = typer.Typer(
    help="Team memory: where the shared DuckLake lives and which projects may be published.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(team_app, name="team")
    app.command("publish")(publish)


class InvalidTeamSetting(WorkbenchError):
    """A ``team init`` value the settings refuse (the message says how to fix it)."""

    status_code = 422
    code = "INVALID_TEAM_SETTING"


def _candidate(settings: Settings, updates: dict[str, Any]) -> Settings:
    """The settings as they would be with ``updates``, validated, nothing written yet."""
    from pydantic import ValidationError

    try:
        return load_settings(settings.data_dir, **updates)
    except ValidationError as exc:
        raise InvalidTeamSetting(_messages(exc)) from None


def _messages(exc: Any) -> str:
    return "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in exc.errors())


def _save(settings: Settings, updates: dict[str, Any]) -> Settings:
    from pydantic import ValidationError

    from workbench.settings import write_settings_file

    try:
        write_settings_file(settings, updates)
    except ValidationError as exc:
        raise InvalidTeamSetting(_messages(exc)) from None
    return load_settings(settings.data_dir)


@team_app.command("init")
@handle_errors
def init(
    catalog: Annotated[
        str,
        typer.Option(help="The DuckLake catalog: postgres://USER@HOST:PORT/DBNAME (no password)."),
    ],
    data: Annotated[
        str, typer.Option(help="Where the Parquet files go: a shared directory or s3://B/PREFIX.")
    ],
    project: Annotated[
        list[str] | None, typer.Option("--project", help="A project to allow (repeatable).")
    ] = None,
    author: Annotated[
        str | None, typer.Option(help="Your author id in the lake (default user@host).")
    ] = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store the team lake's settings and create its tables (password: PGPASSWORD/.pgpass)."""
    from workbench.team import lake

    settings = load_settings(data_dir)
    updates: dict[str, Any] = {"team_catalog": catalog, "team_data": data}
    if project:
        updates["team_projects"] = list(dict.fromkeys([*settings.team_projects, *project]))
    if author is not None:
        updates["team_author"] = author
    # The lake must answer before anything is stored: a mistyped host is refused, not kept.
    candidate = _candidate(settings, updates)
    lake.check_data_path(candidate)
    con = lake.connect(candidate)  # creates the tables
    try:
        snapshot = lake.current_snapshot(con)
    finally:
        con.close()
    settings = _save(settings, updates)
    _show(settings, snapshot, as_json)


@team_app.command("status")
@handle_errors
def status(data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Show the team settings, the last publish from here, and check that the lake answers.

    Exits 1 when the lake does not answer, after showing the rest (the last publish's error
    is often the clue).
    """
    from workbench.team import lake

    settings = load_settings(data_dir)
    lake.require_configured(settings)
    try:
        con = lake.connect(settings, create_tables=False)
    except lake.LakeUnavailable as exc:
        _show(settings, None, as_json, problem=exc.message)
        raise typer.Exit(1) from None
    try:
        snapshot = lake.current_snapshot(con)
    finally:
        con.close()
    _show(settings, snapshot, as_json)


def _show(
    settings: Settings, snapshot: int | None, as_json: bool, problem: str | None = None
) -> None:
    from workbench.team import last_publish

    last = last_publish.read(settings)
    info = {
        "catalog": settings.team_catalog,
        "data": settings.team_data,
        "projects": settings.team_projects,
        "author": settings.team_author_id(),
        "snapshot": snapshot,
        "publish_on_stop": settings.team_publish_on_stop,
        "last_publish": last,
    }
    if problem is not None:
        info["lake_error"] = problem
    if as_json:
        print_json(info)
        return
    key_values(
        "team lake",
        [
            ("catalog", info["catalog"]),
            ("data path", info["data"]),
            ("projects allowed", ", ".join(settings.team_projects) or "none (publish nothing)"),
            ("author", info["author"]),
            ("lake", f"answers, snapshot {snapshot}" if problem is None else f"PROBLEM: {problem}"),
            ("publish on stop", "on" if settings.team_publish_on_stop else "off"),
            ("last publish", last_publish.describe(last)),
        ],
    )


@team_app.command("allow")
@handle_errors
def allow(
    project: Annotated[str, typer.Argument(help="Project whose memory may be published.")],
    data_dir: DataDirOption = None,
) -> None:
    """Put a project on the team allowlist."""
    settings = load_settings(data_dir)
    if project in settings.team_projects:
        typer.echo(f"{project} is already allowed")
        return
    _save(settings, {"team_projects": [*settings.team_projects, project]})
    typer.echo(f"allowed {project}: `workbench publish` will share its redacted memory")


@team_app.command("deny")
@handle_errors
def deny(
    project: Annotated[str, typer.Argument(help="Project to take off the allowlist.")],
    data_dir: DataDirOption = None,
) -> None:
    """Take a project off the team allowlist (rows already published stay in the lake)."""
    settings = load_settings(data_dir)
    if project not in settings.team_projects:
        raise InvalidTeamSetting(
            f"{project!r} is not on the team allowlist "
            f"({', '.join(settings.team_projects) or 'empty'}); nothing to deny"
        )
    _save(settings, {"team_projects": [p for p in settings.team_projects if p != project]})
    typer.echo(f"denied {project}: nothing more of it will be published")


@team_app.command("maintain")
@handle_errors
def maintain(
    older_than: Annotated[
        str | None,
        typer.Option(
            help="Expire snapshots (and delete files only they use) older than this: 0s, 12h, "
            "7d… (default: the team_snapshot_retention setting)."
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be removed; change nothing.")
    ] = False,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Lake upkeep: expire old snapshots, compact small Parquet files, delete dead files.

    Run it regularly (e.g. daily): it is also what removes forgotten observations' text from
    the shared files (`--older-than 0s` does it now, at the cost of time travel).
    """
    from workbench.team.maintain import maintain as run
    from workbench.team.maintain import retention_seconds

    settings = load_settings(data_dir)
    try:
        seconds = retention_seconds(settings, older_than)
    except ValueError as exc:
        raise InvalidTeamSetting(f"--older-than: {exc}") from None
    report = run(settings, older_than_s=seconds, dry_run=dry_run)
    if as_json:
        print_json(report.to_json())
        return
    verb = "would remove" if dry_run else "removed"

    def usage(pair: tuple[int, int] | None) -> str:
        return "unknown" if pair is None else f"{pair[0]} files, {pair[1]:,} bytes"

    expired = report.expired_snapshots
    rows: list[tuple[str, Any]] = [
        (
            f"snapshots expired (older than {older_than or settings.team_snapshot_retention})",
            f"{len(expired)}" + (f" ({expired[0]}–{expired[-1]})" if expired else ""),
        ),
        (
            "files rewritten without deleted rows",
            "skipped (dry run)" if dry_run else report.rewritten_files,
        ),
        (
            "small files merged",
            "skipped (dry run)" if dry_run else f"{report.merged_files} into {report.merged_into}",
        ),
        (f"dead files {verb}", len(report.removed_files)),
        (f"orphaned files {verb}", len(report.orphaned_files)),
        ("snapshots kept", f"{report.oldest_snapshot} to {report.newest_snapshot}"),
        ("Parquet before", usage(report.parquet_before)),
        ("Parquet after", usage(report.parquet_after)),
        (
            "catalog statistics rewritten",
            "skipped (dry run)"
            if dry_run
            else ("yes" if report.catalog_vacuumed else "no: PostgreSQL refused VACUUM FULL"),
        ),
    ]
    table("team lake maintenance" + (" (dry run)" if dry_run else ""), ["step", "result"], rows)


@handle_errors
def publish(
    project: Annotated[
        str | None, typer.Option(help="Publish only this (allowlisted) project.")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Only rows created from this ISO date/time (UTC).")
    ] = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Publish the redacted memory of allowlisted projects to the team lake (one snapshot)."""
    from workbench.clock import ms_from_iso
    from workbench.team import last_publish
    from workbench.team.lake import TeamNotConfigured
    from workbench.team.publish import publish

    def run(settings: Settings, **options: Any) -> Any:
        """``publish``, its outcome recorded for ``team status`` (failures too)."""
        try:
            result = publish(settings, **options)
        except TeamNotConfigured:
            raise  # nothing to record: there is no lake
        except WorkbenchError as exc:
            last_publish.record(settings, "workbench publish", error=exc.message)
            raise
        last_publish.record(settings, "workbench publish", result=result)
        return result

    settings = load_settings(data_dir)
    since_ms = None
    if since is not None:
        try:
            since_ms = ms_from_iso(since)
        except ValueError as exc:
            raise InvalidTeamSetting(f"--since: {exc}") from None
    if as_json:
        result = run(settings, project=project, since_ms=since_ms)
        print_json(result.to_json())
        return
    from rich.progress import Progress

    with Progress(console=_stderr(), transient=True) as bar:
        task = bar.add_task("publishing", total=None)

        def advance(what: str, step: int, total: int) -> None:
            bar.update(task, total=total, advance=step, description=f"publishing {what}")

        result = run(settings, project=project, since_ms=since_ms, progress=advance)
    rows: list[tuple[str, Any]] = list(result.added.items())
    rows.append(("tombstones", result.tombstoned))
    rows.append(("superseded (rewritten locally)", result.superseded))
    rows.append(("snapshot", result.snapshot if result.snapshot is not None else "none: no change"))
    table(f"published as {result.author}", ["table", "rows added"], rows)


def _stderr() -> Any:
    from rich.console import Console

    return Console(stderr=True)
