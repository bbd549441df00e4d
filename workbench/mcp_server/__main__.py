"""``python -m workbench.mcp_server``: the stdio MCP server, as ``workbench mcp`` runs it."""

from workbench.mcp_server.server import run
from workbench.settings import load_settings

run(load_settings())
