"""``workbench install | uninstall``: register the hooks (and MCP server) with an agent.

``--agent claude`` (the default): two files, the hooks in ``settings.json``
(``workbench.claude_settings``) and the MCP server in ``.claude.json``'s user-scope
``mcpServers`` (``workbench.claude_mcp``); both are checked before either is written, so a
refusal leaves both untouched. ``--agent gemini|codex``: the hooks only, in that agent's file
(``workbench.agent_hooks``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli.output import DataDirOption, handle_errors
from workbench.errors import InvalidInput
from workbench.platforms import PLATFORM_SOURCES

# Each platform's adapter name (workbench.platforms: stdlib, cheap to import for the CLI).
AGENT_NAMES = tuple(PLATFORM_SOURCES.values())
AgentOption = Annotated[
    str, typer.Option(help="The agent to (un)register with: claude | gemini | codex.")
]


def _checked(agent: str) -> str:
    if agent not in AGENT_NAMES:
        raise InvalidInput(
            f"unknown agent {agent!r}: use --agent with one of {', '.join(AGENT_NAMES)}"
        )
    return agent


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
    agent: AgentOption = "claude",
) -> None:
    """Merge workbench's hooks into the agent's settings (Claude Code: and register MCP).

    Idempotent, with a backup of each file it changes. Restart the agent to pick them up.
    """
    from workbench import agent_hooks, claude_mcp, claude_settings

    pinned = Path(data_dir).expanduser().resolve() if data_dir else None
    if _checked(agent) != "claude":
        changed, backup = agent_hooks.install(agent, python, pinned)
        _report("workbench hooks", agent_hooks.config_path(agent), changed, backup, "installed")
        return
    claude_mcp.check()  # refuse before writing anything
    changed, backup = claude_settings.install(python, pinned)
    _report("workbench hooks", claude_settings.settings_path(), changed, backup, "installed")
    changed, backup = claude_mcp.install(python, pinned)
    _report("workbench MCP server", claude_mcp.config_path(), changed, backup, "installed")


@handle_errors
def uninstall(agent: AgentOption = "claude") -> None:
    """Remove only workbench's hooks (and MCP server) from the agent's files (with backups)."""
    from workbench import agent_hooks, claude_mcp, claude_settings

    if _checked(agent) != "claude":
        changed, backup = agent_hooks.uninstall(agent)
        _report("workbench hooks", agent_hooks.config_path(agent), changed, backup, "removed")
        return

    changed, backup = claude_settings.uninstall()
    _report("workbench hooks", claude_settings.settings_path(), changed, backup, "removed")
    changed, backup = claude_mcp.uninstall()
    _report("workbench MCP server", claude_mcp.config_path(), changed, backup, "removed")
