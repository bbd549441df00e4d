"""``workbench stale [--project P] [--commits] [--json]``: memories a later change outdated.

Through the service (``POST /api/stale``, which records the verdicts for ``workbench sql``'s
``staleness`` view): every observation whose cited files no longer hold the content it saw,
newest first, with the files that changed and, with ``--commits``, the commits since.
"""

from __future__ import annotations

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


def register(app: typer.Typer) -> None:
    app.command("stale")(stale)


@handle_errors
def stale(
    project: Annotated[str | None, typer.Option(help="Only this project.")] = None,
    limit: Annotated[
        int, typer.Option(min=1, max=10_000, help="List at most this many (newest first).")
    ] = 500,
    commits: Annotated[
        bool, typer.Option("--commits", help="Also list the commits since that changed them.")
    ] = False,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """List observations a later change made stale: a file they cite (read or modified) no
    longer holds the content they saw (edited, committed over, reverted, deleted).

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it.
    """
    from workbench.client import writer

    settings = load_settings(data_dir)
    client, _ = writer(settings, say=lambda message: typer.echo(message, err=True))
    body: dict[str, Any] = {"limit": limit, "commits": commits}
    if project is not None:
        body["project"] = project
    with client:
        reply = client.post("/api/stale", body)
    if as_json:
        print_json(reply)
        return
    from rich.markup import escape

    items = reply["items"]
    where = f" in {project}" if project else ""
    title = f"{reply['stale']} stale of {reply['checked']} observations with evidence{where}" + (
        f" (newest {len(items)})" if len(items) < reply["stale"] else ""
    )
    columns = ["id", "created (UTC)", "type", "title", "changed since", "commit"]
    if commits:
        columns.append("commits since")
    rows = []
    for item in items:
        row = [
            f"#{item['id']}",
            item["createdAt"][:16].replace("T", " "),
            item["type"],
            escape(item["title"][:80]),
            escape(", ".join(item["changedFiles"])),
            (item["gitCommit"] or "")[:10] or "(no git)",
        ]
        if commits:
            row.append(escape("\n".join(item["commits"])))
        rows.append(row)
    table(title, columns, rows)
