"""The agents workbench installs into: one module per agent, each with the same shape.

``workbench install | uninstall --agent NAME`` and ``doctor`` only ever go through this shape,
so an agent is added by writing its module and listing it in ``MODULES``. Each module has:

- ``NAME``: the ``--agent`` name, which is also its hook adapter's (``hooks/adapters/``)
- ``LABEL``: how people call it ("Claude Code")
- ``config_dir() -> Path``: the folder whose presence says the agent is on this machine
- ``detected() -> bool``: that folder exists (``--agent all`` installs into these)
- ``install(python, data_dir) -> list[Change]``: merge our hooks (and MCP server) in, keeping
  the user's own entries, idempotent, a backup before each write
- ``check()``: raise the error ``install`` would raise for any file it writes, writing
  nothing; ``install`` asks every chosen agent first, so ``--agent all`` refused by one
  writes into none
- ``uninstall() -> list[Change]``: take only ours out
- ``check_uninstall()``: the same for ``uninstall``: every file it would write is read and
  shape-checked first, for one agent and across ``--agent all``
- ``checks() -> list[Check]``: what ``doctor`` says about this agent
- optional ``notes() -> list[str]``: what the user must still do in the agent after
  ``install`` (Codex: trust the hooks in its own screen), printed after the changes

Modules:
- ``base``        ``Change`` and ``Check``: the files an agent module changed, what ``doctor`` says
- ``claude``      Claude Code: hooks in ``settings.json``, the MCP server in ``.claude.json``
- ``claude_settings`` our hook entries merged into Claude Code's settings.json, and taken out
- ``claude_mcp``  our MCP server registered with Claude Code (user scope), and taken out
- ``claude_plugin`` workbench as a Claude Code plugin folder and local marketplace
- ``claude_auto_memory`` Claude Code's auto-memory switch at install, restored at uninstall
- ``gemini``      Gemini CLI: hooks and the MCP server in ``~/.gemini/settings.json``
- ``codex``       Codex CLI: hooks in ``hooks.json``, the MCP server in ``config.toml``
- ``codex_trust`` whether Codex CLI trusts our hooks (it runs a hook only once trusted)
- ``cursor``      Cursor: hooks in ``~/.cursor/hooks.json``, the MCP server in ``mcp.json``
- ``windsurf``    Windsurf: hooks in ``hooks.json``, MCP in ``mcp_config.json`` beside it
- ``opencode``    OpenCode: our plugin in its plugins folder, the MCP server in ``opencode.json``
- ``copilot``     GitHub Copilot CLI: the MCP server in ``~/.copilot/mcp-config.json`` (MCP only)
- ``goose``       Goose: our MCP server as a ``stdio`` extension in ``config.yaml`` (MCP only)
- ``roo``         Roo Code: the MCP server in its global ``mcp_settings.json`` (MCP only)
- ``warp``        Warp: the MCP server in ``~/.warp/.mcp.json`` (MCP only)
- ``hook_json``   hooks in Claude Code's JSON shape, in any agent's file
- ``flat_hooks``  our entries in an agent's *flat* hooks file (Cursor, Windsurf)
- ``mcp_json``    our MCP server in an agent's JSON ``mcpServers`` object
- ``mcp_toml``    our MCP server in Codex CLI's ``config.toml`` (``[mcp_servers.workbench]``)
- ``mcp_only``    an MCP-only agent's JSON registration (Copilot CLI, Roo Code, Warp)
- ``goose_yaml``  Goose's YAML, edited as text
- ``health``      what ``workbench doctor`` says about one agent, in one row
"""

from __future__ import annotations

import importlib
from types import ModuleType

# --agent name -> module under workbench.agents
MODULES = {
    "claude": "claude",
    "gemini": "gemini",
    "codex": "codex",
    "cursor": "cursor",
    "windsurf": "windsurf",
    "opencode": "opencode",
    # MCP only (issue 22 item 4): no hooks, the server and its tools
    "copilot": "copilot",
    "goose": "goose",
    "roo": "roo",
    "warp": "warp",
}
NAMES = tuple(MODULES)


def load(name: str) -> ModuleType:
    """The module for agent ``name`` (one of ``NAMES``)."""
    return importlib.import_module(f"workbench.agents.{MODULES[name]}")
