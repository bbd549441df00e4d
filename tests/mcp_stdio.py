"""Start a registered MCP server exactly as an agent would, and list its tools.

The command, args and env come from the agent's config file as ``install`` wrote them. The
server starts in a user's project that holds a decoy ``workbench`` package, which exits when
imported: the registered command must run the installed workbench, never whatever
``workbench`` folder the agent's working directory has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def decoy_project(tmp_path: Path) -> Path:
    """A user's project folder holding a ``workbench`` package that must never be imported."""
    project = tmp_path / "someones-project"
    (project / "workbench").mkdir(parents=True)
    (project / "workbench" / "__init__.py").write_text("raise SystemExit('decoy imported')\n")
    return project


def tool_names(entry: dict[str, Any], tmp_path: Path) -> set[str]:
    """The tools the server of ``entry`` lists, started in ``decoy_project(tmp_path)``."""
    server = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env=entry["env"],
        cwd=str(decoy_project(tmp_path)),
    )

    async def names() -> set[str]:
        with (tmp_path / "mcp-stderr.log").open("w", encoding="utf-8") as errors:
            async with stdio_client(server, errlog=errors) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(60):
                        await session.initialize()
                        return {tool.name for tool in (await session.list_tools()).tools}

    return anyio.run(names)
