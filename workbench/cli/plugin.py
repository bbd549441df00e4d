"""``workbench plugin build``: workbench as a Claude Code plugin folder and a local marketplace."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli.output import DataDirOption, handle_errors

plugin_app = typer.Typer(
    name="plugin",
    help="Claude Code plugin packaging: the hooks and MCP server as a plugin folder.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(plugin_app, name="plugin")


@plugin_app.command("build")
@handle_errors
def build(
    out: Annotated[
        Path,
        typer.Argument(help="Folder for the marketplace; the plugin goes in OUT/workbench."),
    ] = Path("workbench-claude-plugin"),
    data_dir: DataDirOption = None,
    python: Annotated[
        str | None,
        typer.Option(help="Interpreter for the hooks and MCP server (default: this one)."),
    ] = None,
) -> None:
    """Write a Claude Code plugin (hooks/hooks.json, .mcp.json, .claude-plugin/plugin.json).

    Load it for one session with `claude --plugin-dir OUT/workbench`, or for good with
    `claude plugin marketplace add OUT` and `claude plugin install workbench@workbench-local`.
    Use it instead of `workbench install`, not with it (each would run every hook).
    """
    from workbench.agents import claude_plugin

    pinned = Path(data_dir).expanduser().resolve() if data_dir else None
    target = out.expanduser().resolve()
    for path in claude_plugin.build(target, python, pinned):
        typer.echo(f"wrote {path}")
    plugin = target / claude_plugin.NAME
    typer.echo(f"load it once:    claude --plugin-dir {plugin}")
    typer.echo(
        f"or for good:     claude plugin marketplace add {target} && "
        f"claude plugin install {claude_plugin.NAME}@{claude_plugin.MARKETPLACE}"
    )
    typer.echo("then: `workbench uninstall` if the settings-file hooks are installed too")
