"""``workbench install | uninstall``: register the hooks and the MCP server with Claude Code.

Two files: the hooks go into ``settings.json`` (``workbench.claude_settings``), the MCP server
into ``.claude.json``'s user-scope ``mcpServers`` (``workbench.claude_mcp``). Both are checked
before either is written, so a refusal leaves both untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli.output import DataDirOption, handle_errors


def register(app: typer.Typer) -> None:
    app.command("install")(install)
    app.command("uninstall")(uninstall)


def _report(what: str, path: Path, changed: bool, backup: Path | None, verb: str) -> None:
    if not changed:
        typer.echo(
            f"{what} {'already' if verb == 'installed' else 'not'} in {path}; nothing changed"
        )
        return
    typer.echo(f"{verb} {what} {'in' if verb == 'installed' else 'from'} {path}")
    if backup:
        typer.echo(f"backup of the previous file: {backup}")


@handle_errors
def install(
    data_dir: DataDirOption = None,
    python: Annotated[
        str | None,
        typer.Option(help="Interpreter for the hooks and MCP server (default: this one)."),
    ] = None,
) -> None:
    """Merge workbench's hooks into Claude Code's settings.json and register its MCP server.

    Idempotent, with a backup of each file it changes. Restart Claude Code to pick them up.
    """
    from workbench import claude_mcp, claude_settings

    pinned = Path(data_dir).expanduser().resolve() if data_dir else None
    claude_mcp.check()  # refuse before writing anything
    changed, backup = claude_settings.install(python, pinned)
    _report("workbench hooks", claude_settings.settings_path(), changed, backup, "installed")
    changed, backup = claude_mcp.install(python, pinned)
    _report("workbench MCP server", claude_mcp.config_path(), changed, backup, "installed")


@handle_errors
def uninstall() -> None:
    """Remove only workbench's hooks and MCP server from Claude Code's files (with backups)."""
    from workbench import claude_mcp, claude_settings

    changed, backup = claude_settings.uninstall()
    _report("workbench hooks", claude_settings.settings_path(), changed, backup, "removed")
    changed, backup = claude_mcp.uninstall()
    _report("workbench MCP server", claude_mcp.config_path(), changed, backup, "removed")
