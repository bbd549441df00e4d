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
) -> None:
    """Run the MCP server over stdio (search, timeline, get_observations, save_memory, workflow).

    Claude Code runs this itself once `workbench install` has registered it; run it by hand
    only to debug (it speaks JSON-RPC on stdin/stdout). Creates the data dir when it does not
    exist. Needs the service: when none runs for this data dir, a temporary one is started
    for this MCP session and stopped when it ends.
    """
    from workbench.mcp_server.front import serve

    serve(str(data_dir) if data_dir is not None else None, start)
