"""``workbench export | import | replay | retry | recompress``: move and repair the memory.

Everything that writes goes through the service (the store's one writer); a command that
needs it while it is down starts a temporary one, says so, and stops it when done. Only
``import`` creates a missing data dir; the others refuse one that does not exist.
``export`` only reads, so it opens the database read-only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    load_settings,
    print_json,
    table,
)

if TYPE_CHECKING:
    from workbench.settings import Settings


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("import")(import_)
    app.command("replay")(replay)
    app.command("retry")(retry)
    app.command("recompress")(recompress)


def _writer(settings: Settings) -> Any:
    from workbench.client import writer

    client, _ = writer(settings, say=lambda message: typer.echo(message, err=True))
    return client


@handle_errors
def export(
    output: Annotated[Path | None, typer.Argument(help="File to write (default: stdout).")] = None,
    project: Annotated[str | None, typer.Option(help="Only this project.")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Export sessions, prompts, observations and summaries as one JSON document."""
    from workbench.store import transfer
    from workbench.store.database import Store

    settings = load_settings(data_dir)
    with Store(settings.db_path, readonly=True) as store:
        document = transfer.export(store.conn, project)
    text = json.dumps(document, indent=2, ensure_ascii=False)
    if output is None:
        typer.echo(text)
        return
    output.write_text(text + "\n", encoding="utf-8")
    counts = {k: len(document[k]) for k in ("sessions", "prompts", "observations", "summaries")}
    typer.echo(f"wrote {output}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


@handle_errors
def import_(
    source: Annotated[
        Path, typer.Argument(help="A workbench export JSON file.", exists=True, dir_okay=False)
    ],
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import an export file; rows already present are skipped, never overwritten.

    Creates the data dir when it does not exist (importing is how a memory moves to a new
    one). Needs the service: when none runs for this data dir, a temporary one is started for
    this command and stopped after it.
    """
    from workbench.errors import InvalidInput

    settings = load_settings(data_dir)
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{source} is not a JSON file ({exc})") from None
    settings.ensure_dirs()
    with _writer(settings) as client:
        report = client.post("/api/import", document)["imported"]
    if as_json:
        print_json(report)
        return
    table(
        f"imported {source.name}",
        ["kind", "imported", "skipped"],
        [(k, v["imported"], v["skipped"]) for k, v in report.items()],
    )


@handle_errors
def replay(data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Deliver spooled hook events (captured while the service was down) now.

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    with _writer(settings) as client:
        report = client.post("/api/spool/replay")
    if as_json:
        print_json(report)
        return
    table(
        "spool replay",
        ["replayed", "duplicates", "skipped", "rejected", "still pending"],
        [
            (
                report["replayed"],
                report["duplicates"],
                report["skipped"],
                report["rejected"],
                report["pending"],
            )
        ],
    )
    for error in report.get("errors", []):
        typer.echo(f"rejected: {error}", err=True)


@handle_errors
def retry(
    event_ids: Annotated[list[int] | None, typer.Argument(help="Event ids (default: all).")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Re-queue parked (failed) events, e.g. after fixing the API key.

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    with _writer(settings) as client:
        result = client.post("/api/queue/retry", {"eventIds": event_ids or None})
    typer.echo(f"re-queued {result['requeued']} events")


@handle_errors
def recompress(
    project: Annotated[str | None, typer.Option(help="Only this project.")] = None,
    since: Annotated[str | None, typer.Option(help="Only events since this ISO date.")] = None,
    compressor: Annotated[
        str | None, typer.Option(help="offline | claude | openai_compat (default: from settings).")
    ] = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Re-derive observations and summaries from the events log and report what changed.

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    from workbench.cli.output import console

    settings = load_settings(data_dir)
    body = {"project": project, "since": since, "compressor": compressor}
    with _writer(settings) as client, console().status("recompressing…"):
        report = client.post("/api/recompress", {k: v for k, v in body.items() if v})
    if as_json:
        print_json(report)
        return
    table(
        f"recompress with {report['compressor']}",
        ["events", "before", "after", "added", "removed", "unchanged", "summaries", "failed"],
        [
            (
                report["events"],
                report["observationsBefore"],
                report["observationsAfter"],
                report["added"],
                report["removed"],
                report["unchanged"],
                report["summaries"],
                len(report["failed"]),
            )
        ],
    )
