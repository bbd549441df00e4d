"""``workbench mcp``: run the stdio MCP server that Claude Code starts (``workbench install``).

stdout is the MCP protocol channel, so this command prints nothing at all: its logs go to
``<data_dir>/logs/mcp.log`` and warnings to stderr.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli.output import DataDirOption


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)


def mcp(
    data_dir: DataDirOption = None,
    start: Annotated[
        bool,
        typer.Option(
            "--start/--no-start",
            help="Start the service when a tool needs it and it is down (default), or fail "
            "with a message saying how to start it.",
        ),
    ] = True,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            help="The agent that runs this server (claude, gemini, codex, cursor, windsurf, "
            "opencode): what save_memory stores is that agent's. `workbench install --agent` "
            "writes it; without it, Claude Code's.",
        ),
    ] = None,
) -> None:
    """Run the MCP server over stdio (search, timeline, get_observations, save_memory, workflow).

    Claude Code runs this itself once `workbench install` has registered it; run it by hand
    only to debug (it speaks JSON-RPC on stdin/stdout). Creates the data dir when it does not
    exist. Needs the service: when none runs for this data dir, a temporary one is started
    for this MCP session and stopped when it ends.
    """
    from workbench.mcp_server.front import serve
    from workbench.platforms import known_agents, source_of_agent

    source = source_of_agent(platform) if platform is not None else None
    if platform is not None and source is None:
        raise typer.BadParameter(
            f"unknown agent {platform[:40]!r}: use one of {known_agents()} "
            "(`workbench install --agent <name>` registers the right one)",
            param_hint="--platform",
        )
    serve(str(data_dir) if data_dir is not None else None, start, source)
