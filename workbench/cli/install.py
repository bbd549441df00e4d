"""``workbench install | uninstall``: register the hooks (and MCP server) with agents.

``--agent NAME`` picks one agent (default ``claude``, as before there were others); ``--agent
all`` takes every agent found on this machine (its config folder exists). The work per agent
is its module's (``workbench.agents``): merged idempotently, the user's entries kept, a backup
before every write; ``uninstall`` removes only ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# The module registry is stdlib-only and does not import the agent modules: cheap for --help.
from workbench.agents import NAMES as AGENT_NAMES
from workbench.cli.output import DataDirOption, handle_errors
from workbench.errors import InvalidInput

AgentOption = Annotated[
    str,
    typer.Option(
        help=f"The agent to (un)register with: {' | '.join(AGENT_NAMES)} | all (every one found)."
    ),
]


def _chosen(agent: str, force: bool = True) -> list[str]:
    """The agent names ``--agent`` stands for (``all``: the ones on this machine).

    Trigger: ``install --agent NAME`` for an agent whose config folder is not there.
    Why: writing ``~/.gemini`` for a Gemini CLI that was never installed leaves a folder the
    user did not ask for, and a config no program reads. Claude Code, the default agent, is
    the exception: ``workbench install`` may come before Claude Code's first run.
    Outcome: refused with the folder it looked for, unless ``--force``.
    """
    from workbench.agents import load

    if agent == "all":
        found = [name for name in AGENT_NAMES if load(name).detected()]
        if not found:
            raise InvalidInput(
                "--agent all found no agent on this machine (none of their config folders "
                f"exists); name one with --agent {' | '.join(AGENT_NAMES)}"
            )
        return found
    if agent not in AGENT_NAMES:
        raise InvalidInput(
            f"unknown agent {agent!r}: use --agent with one of {', '.join(AGENT_NAMES)}, or all"
        )
    module = load(agent)
    if not force and agent != "claude" and not module.detected():
        raise InvalidInput(
            f"{module.LABEL} is not on this machine (no {module.config_dir()}): install it "
            f"first, or pass --force to write its config anyway; nothing was changed"
        )
    return [agent]


def register(app: typer.Typer) -> None:
    app.command("install")(install)
    app.command("uninstall")(uninstall)


def _report(label: str, changes: list, verb: str) -> None:
    """One line per change; each backup once (hooks and MCP server may share a file)."""
    shown: set = set()
    for what, path, changed, backup in changes:
        if not changed:
            where = "already in" if verb == "installed" else "not in"
            typer.echo(f"{label}: {what} {where} {path}; nothing changed")
            continue
        typer.echo(f"{label}: {verb} {what} {'in' if verb == 'installed' else 'from'} {path}")
        if backup and backup not in shown:
            shown.add(backup)
            typer.echo(f"backup of the previous file: {backup}")


@handle_errors
def install(
    data_dir: DataDirOption = None,
    python: Annotated[
        str | None,
        typer.Option(help="Interpreter for the hooks and MCP server (default: this one)."),
    ] = None,
    agent: AgentOption = "claude",
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Write an agent's config even when the agent is not on this machine."
        ),
    ] = False,
    auto_memory: Annotated[
        bool | None,
        typer.Option(
            "--disable-auto-memory/--keep-auto-memory",
            help=(
                "Claude Code only: switch its built-in auto-memory off "
                "(CLAUDE_CODE_DISABLE_AUTO_MEMORY=1 in settings.json env; uninstall restores "
                "what was there) or leave it. Asked when omitted on a terminal; kept otherwise."
            ),
        ),
    ] = None,
) -> None:
    """Merge workbench's hooks (and MCP server) into the agent's config files.

    Idempotent, with a backup of each file it changes. Restart the agent to pick them up.
    An agent other than claude must be on this machine (its config folder), or --force.
    """
    from workbench.agents import load

    pinned = Path(data_dir).expanduser().resolve() if data_dir else None
    modules = [load(name) for name in _chosen(agent, force)]
    # Every agent is asked first, so a refusal by one (``--agent all``) writes into none.
    for module in modules:
        module.check()
    switch_off = "claude" in [m.NAME for m in modules] and _switch_off_auto_memory(auto_memory)
    for module in modules:
        changes = module.install(python, pinned)
        if switch_off and module.NAME == "claude":
            from workbench.agents import claude_auto_memory

            changes.append(claude_auto_memory.disable())
        _report(module.LABEL, changes, "installed")
        # What the user must still do in the agent itself (Codex: trust the hooks).
        for note in getattr(module, "notes", list)():
            typer.echo(note)


def _switch_off_auto_memory(choice: bool | None) -> bool:
    """The flag's answer; else the user's, asked on a terminal; else no (consent first).

    Trigger: ``install`` for Claude Code without --disable-auto-memory/--keep-auto-memory.
    Why: two memories compete for one context window, but turning Claude Code's own off is
    the user's call (claude-mem asks too); a script or CI has no one to ask.
    Outcome: a prompt on a terminal (default no); silently kept otherwise.
    """
    import sys

    from workbench.agents import claude_auto_memory

    if choice is None and sys.stdin.isatty():
        choice = typer.confirm(
            "Switch off Claude Code's built-in auto-memory (CLAUDE_CODE_DISABLE_AUTO_MEMORY=1)"
            " so only workbench's memory fills the context? uninstall switches it back",
            default=False,
        )
    if choice:
        claude_auto_memory.check()  # refuse before anything is written
    return bool(choice)


@handle_errors
def uninstall(agent: AgentOption = "claude") -> None:
    """Remove only workbench's hooks (and MCP server) from the agent's files (with backups)."""
    from workbench.agents import load

    modules = [load(name) for name in _chosen(agent)]
    # As for install: a refusal by one agent (``--agent all``) changes no agent's files.
    for module in modules:
        module.check_uninstall()
    for module in modules:
        _report(module.LABEL, module.uninstall(), "removed")
