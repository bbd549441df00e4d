"""``workbench team refresh``: bring the local team mirror up to the lake (or rebuild it).

The mirror (``workbench/team/mirror.py``) is derived: ``search --team`` and team refs refresh
it on their own, so this command is for rebuilding it (``--rebuild``) or checking where it is.
A lake that does not answer leaves the mirror as it was; the command says so and exits 1.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    key_values,
    load_settings,
    print_json,
)


def register(app: typer.Typer) -> None:  # noqa: ARG001 - the group lives on team_app
    from workbench.cli.team import team_app

    team_app.command("refresh")(refresh)


@handle_errors
def refresh(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the mirror and copy the lake again.")
    ] = False,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Update the local team mirror (what search --team reads) to the lake's newest snapshot."""
    from workbench.team import mirror

    settings = load_settings(data_dir)
    result = mirror.refresh(settings, rebuild=rebuild)
    if as_json:
        print_json(result.to_json() | {"path": str(settings.team_mirror_path)})
    else:
        how = {
            "current": "already current",
            "incremental": f"updated: {result.added} added, {result.removed} removed",
            "rebuild": f"rebuilt: {result.added} observations",
            "stale": f"NOT refreshed, serving the last mirror: {result.stale}",
        }[result.mode]
        key_values(
            "team mirror",
            [
                ("path", str(settings.team_mirror_path)),
                ("snapshot", result.snapshot),
                ("refresh", how),
            ],
        )
    if result.stale:
        raise typer.Exit(1)
