"""A user's own MCP server (not workbench's), for the real-agent suite: one tool, ``lookup``.

Why a second server: workbench's own MCP tools are never memories (``workbench/own_tools.py``),
so a call of them cannot show how an agent's MCP tool results are stored. A call of this
server's tool must make an observation like any other tool call (issue 20 item 13: OpenCode
hands plugins an MCP result as ``{content, isError}``). Real MCP over stdio, the ``mcp`` SDK.

    python tests/notes_mcp_server.py     # serves on stdin/stdout until stdin closes
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


def note_on(topic: str) -> str:
    """The team's note on ``topic`` (the same sentence every time: tests look for it)."""
    return f"Notes on {topic}: the refresh token lives 14 days."


@server.tool()
def lookup(topic: str) -> str:
    """Look up the team's notes on a topic."""
    return note_on(topic)


if __name__ == "__main__":
    server.run()
