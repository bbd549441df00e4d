"""``workbench import-transcripts [PATHS]``: the history agents kept before workbench ran.

Reads Claude Code's and Codex's own session files (defaults: ``~/.claude/projects/**/*.jsonl``
and ``~/.codex/sessions/**/*.jsonl``; a PATH may be a file, a folder or a glob) into the
memory through the service, one request per file (``POST /api/transcripts/import``), with a
progress bar, then a summary table. Idempotent: the service keeps each file's offset, so a
second run reads only what was added since (see ``workbench.transcripts``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    load_settings,
    print_json,
    table,
)

COUNTS = ("imported", "present", "skipped", "ignored", "unknown", "badLines")


def register(app: typer.Typer) -> None:
    app.command("import-transcripts")(import_transcripts)


@handle_errors
def import_transcripts(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Transcript files, folders or globs (default: Claude Code's and Codex's).",
            show_default=False,
        ),
    ] = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import Claude Code and Codex session transcripts (history from before install).

    Each file is read once: a second run imports only lines added since. Sessions the hooks
    already delivered are left as they are; nothing is stored twice.
    """
    from workbench.client import writer
    from workbench.errors import InvalidInput
    from workbench.transcripts.paths import default_globs, expand

    settings = load_settings(data_dir)
    patterns = list(paths or default_globs())
    files = expand(patterns)
    wrong = [f for f in files if f.suffix != ".jsonl"]
    if wrong:
        raise InvalidInput(
            f"{wrong[0]} is not a .jsonl file; pass transcript files (*.jsonl), folders "
            "holding them or globs, e.g. ~/.claude/projects"
        )
    if not files:  # nothing to read: no service needed
        typer.echo("no transcript files found in: " + ", ".join(patterns))
        return
    client, _ = writer(settings, say=lambda message: typer.echo(message, err=True))
    with client:
        reports = _send(client, files, show=not as_json)
    totals = _totals(reports)
    if as_json:
        print_json({"reports": reports, **totals})
        return
    table(
        "import-transcripts",
        ["files", "sessions", "imported", "already present", "skipped", "ignored lines",
         "unknown lines", "errors"],
        [(totals["files"], totals["sessions"], totals["imported"], totals["present"],
          totals["skipped"], totals["ignored"], totals["unknown"], totals["errors"])],
    )  # fmt: skip
    for report in reports:
        for error in report["errors"]:
            typer.secho(f"error: {error}", fg=typer.colors.RED, err=True)
        if report["badLines"]:
            typer.echo(f"{report['path']}: {report['badLines']} unreadable lines skipped", err=True)


def _send(client: Any, files: list[Path], *, show: bool) -> list[dict[str, Any]]:
    """One request per file, a progress bar over the files."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    reports: list[dict[str, Any]] = []
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, disable=not show, transient=True) as bar:
        task = bar.add_task("transcripts", total=len(files))
        for path in files:
            bar.update(task, description=path.name[:40])
            reports.append(client.post("/api/transcripts/import", {"path": str(path)}))
            bar.advance(task)
    return reports


def _totals(reports: list[dict[str, Any]]) -> dict[str, int]:
    sessions = {s for r in reports for s in r["sessions"]}
    found = {"files": len(reports), "sessions": len(sessions)}
    for name in COUNTS:
        found[name] = sum(int(r[name]) for r in reports)
    found["errors"] = sum(len(r["errors"]) for r in reports) + found["badLines"]
    return found
