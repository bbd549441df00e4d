"""``workbench reindex``: rebuild the derived indexes (FTS5 and vectors) from SQLite.

The service does the work (it is the store's one writer and holds the embedding model):
``POST /api/reindex`` queues the job and returns at once, and this command polls
``GET /api/index/status`` for a progress bar, then prints what it cost: texts embedded now,
vectors reused from the cache (an unchanged store re-embeds nothing), the total and seconds.
When the service is down a temporary one runs the rebuild and is stopped after (the command
says so); ``--no-wait`` needs a running service, since nothing would be left to finish the job.
"""

from __future__ import annotations

import time
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

POLL_S = 0.25


def register(app: typer.Typer) -> None:
    app.command("reindex")(reindex)


@handle_errors
def reindex(
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait for the rebuild and report it.")
    ] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait at most.")] = 3600.0,
) -> None:
    """Rebuild full-text and vector indexes from the database, with a progress bar.

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    from workbench.client import writer
    from workbench.errors import WorkbenchError

    settings = load_settings(data_dir)
    # Trigger: --no-wait with no service running. / Why: a temporary service would be
    # stopped before the job ran, and leaving one behind unasked is worse. / Outcome: refuse
    # and say how to start one.
    client, _ = writer(settings, start=wait, say=lambda message: typer.echo(message, err=True))
    with client:
        job = client.post("/api/reindex")["job"]
        if not wait:
            if as_json:
                print_json(job)
            else:
                typer.echo(f"reindex job {job['id']} queued")
            return
        final = _follow(client, job["id"], timeout, show=not as_json)
    if final is None:
        raise WorkbenchError(
            f"reindex job {job['id']} did not finish in {timeout:.0f} s; it keeps running in "
            "the service: check `curl -s 127.0.0.1:PORT/api/index/status` or run again later"
        )
    if as_json:
        print_json(final)
    else:
        _report(final)
    if final["state"] == "failed":
        raise typer.Exit(1)


def _follow(client: Any, job_id: int, timeout: float, *, show: bool) -> dict[str, Any] | None:
    """Poll the status until ``job_id`` ends; draw a progress bar when ``show``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    deadline = time.monotonic() + timeout
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, disable=not show, transient=True) as bar:
        task = bar.add_task("full text", total=None)
        while time.monotonic() < deadline:
            status = client.get("/api/index/status")
            job = status.get("reindex") or {}
            if job.get("id") == job_id:
                phase = job.get("phase", "")
                label = {"fts": "full text", "vectors": "vectors", "saving": "saving"}.get(
                    phase, phase
                )
                bar.update(
                    task, description=label, completed=job["done"], total=job["total"] or None
                )
                if job.get("state") in ("done", "failed"):
                    return {**job, "index": {k: v for k, v in status.items() if k != "reindex"}}
            time.sleep(POLL_S)
    return None


def _report(job: dict[str, Any]) -> None:
    index = job.get("index", {})
    table(
        f"reindex {job['state']}",
        ["full text", "vectors", "embedded now", "reused", "total", "pruned", "seconds"],
        [
            (
                f"rebuilt in {job['fts_seconds']} s",
                job["vectors"].split(":", 1)[0],
                job["embedded"],
                job["reused"],
                job["total"],
                job["pruned"],
                job["seconds"],
            )
        ],
    )
    if ":" in job["vectors"]:
        typer.echo(f"vectors {job['vectors']}")
    if job.get("error"):
        typer.secho(f"error: {job['error']}", fg=typer.colors.RED, err=True)
    if index:
        typer.echo(
            f"index: {index.get('indexed')} vectors ({index.get('embedder')}, "
            f"{index.get('index')}), state {index.get('state')}"
        )
