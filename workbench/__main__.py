"""``python -m workbench`` is the ``workbench`` command.

``python -m workbench mcp`` (what ``workbench install`` registers with every agent) skips the
CLI: the MCP server must answer the agent's handshake in well under a second, and Typer
alone costs ~0.3 s to import (``mcp_server.front``). Options it does not know go to the CLI.
"""

import sys

if sys.argv[1:2] == ["mcp"]:
    from workbench.mcp_server.front import main

    if main(sys.argv[2:]):
        sys.exit(0)

from workbench.cli.main import run  # noqa: E402

run()
