"""``workbench install | uninstall``: register the hooks with Claude Code, or remove them."""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli.output import DataDirOption, handle_errors


def register(app: typer.Typer) -> None:
    app.command("install")(install)
    app.command("uninstall")(uninstall)


@handle_errors
def install(
    data_dir: DataDirOption = None,
    python: Annotated[
        str | None, typer.Option(help="Interpreter for the hooks (default: this one).")
    ] = None,
) -> None:
    """Merge workbench's hooks into Claude Code's settings.json (idempotent, with a backup)."""
    from pathlib import Path

    from workbench import claude_settings

    pinned = Path(data_dir).expanduser().resolve() if data_dir else None
    changed, backup = claude_settings.install(python, pinned)
    path = claude_settings.settings_path()
    if not changed:
        typer.echo(f"hooks already installed in {path}; nothing changed")
        return
    typer.echo(f"installed workbench hooks in {path}")
    if backup:
        typer.echo(f"backup of the previous file: {backup}")


@handle_errors
def uninstall() -> None:
    """Remove only workbench's hooks from Claude Code's settings.json (with a backup)."""
    from workbench import claude_settings

    changed, backup = claude_settings.uninstall()
    path = claude_settings.settings_path()
    if not changed:
        typer.echo(f"no workbench hooks in {path}; nothing changed")
        return
    typer.echo(f"removed workbench hooks from {path}")
    if backup:
        typer.echo(f"backup of the previous file: {backup}")
