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

``Change`` and ``Check`` are in ``workbench.agents.base``. Helpers beside the agents:
``mcp_only`` (an MCP-only agent's JSON registration: Copilot CLI, Roo Code, Warp),
``goose_yaml`` (Goose's YAML, edited as text), ``claude_auto_memory`` (Claude Code's
auto-memory switch at install, restored at uninstall).
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
