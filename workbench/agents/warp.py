"""Warp: the MCP server in ``~/.warp/.mcp.json`` (MCP only).

Warp reads file-based MCP servers from ``~/.warp/.mcp.json`` (global) and
``<repo>/.warp/.mcp.json`` (project), in the standard ``{"mcpServers": {"<name>": {"command",
"args", "env"}}}`` shape: Warp's own bundled skill "agent-add-mcp" (warpdotdev/warp,
https://www.skills.sh/warpdotdev/warp/agent-add-mcp, "Config file paths") and its MCP docs
(https://docs.warp.dev/agents/capabilities/mcp, "Configurations from most MCP Clients can be
directly copied and pasted"). The path is the same on every platform (``~/.warp`` is Warp's
cross-platform home carve-out). ``~/.warp`` only appears once Warp has been run.
"""

from __future__ import annotations

from pathlib import Path

from workbench.agents.mcp_only import McpOnly

NAME = "warp"
LABEL = "Warp"


def config_dir() -> Path:
    return Path.home() / ".warp"


def mcp_path() -> Path:
    return config_dir() / ".mcp.json"


AGENT = McpOnly(
    NAME,
    LABEL,
    config_dir,
    mcp_path,
    "in Warp's Settings > MCP servers, or by editing ~/.warp/.mcp.json",
)
detected, check, check_uninstall, install, uninstall, checks = AGENT.module_functions()
