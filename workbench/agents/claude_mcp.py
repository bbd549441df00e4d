"""Register workbench's MCP server with Claude Code (user scope), and take it out again.

Claude Code keeps user-scope MCP servers (``claude mcp add --scope user``) in its state file
``~/.claude.json`` — or ``$CLAUDE_CONFIG_DIR/.claude.json`` when that variable is set — under
the top-level key ``"mcpServers"``; ``~/.claude/settings.json`` is not read for them. Ours:

    "mcpServers": {"workbench": {"type": "stdio", "command": "<abs python>",
                   "args": ["-P", "-m", "workbench", "mcp"], "env": {...}}}

The file is Claude Code's own state (history, accounts, per-project settings), so it is
written owner-only when new; the merge rules are ``workbench.agents.mcp_json``'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workbench.agents import mcp_json

SERVER_NAME = mcp_json.SERVER_NAME
REMOVE_HINT = f"`claude mcp remove {SERVER_NAME} -s user`"


def config_path() -> Path:
    """``$CLAUDE_CONFIG_DIR/.claude.json`` when the variable is set, else ``~/.claude.json``."""
    env = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(env).expanduser() / ".claude.json" if env else Path.home() / ".claude.json"


def server_entry(python: str | None = None, data_dir: Path | None = None) -> dict[str, Any]:
    """The ``mcpServers.workbench`` value for this interpreter (and pinned data dir)."""
    return mcp_json.server_entry(python, data_dir, type="stdio")


def installed() -> bool:
    """True when Claude Code's config registers our MCP server (``doctor`` asks this)."""
    return mcp_json.installed(config_path())


def check() -> None:
    """Raise ``ClaudeSettingsError`` if ``install`` would refuse; writes nothing."""
    mcp_json.check(config_path(), REMOVE_HINT)


def check_uninstall() -> None:
    """Raise ``ClaudeSettingsError`` if ``uninstall`` would refuse; writes nothing."""
    mcp_json.check_uninstall(config_path())


def install(python: str | None = None, data_dir: Path | None = None) -> tuple[bool, Path | None]:
    """Add or update our entry; return (changed, backup path)."""
    return mcp_json.install(
        config_path(), server_entry(python, data_dir), REMOVE_HINT, new_mode=0o600
    )


def uninstall() -> tuple[bool, Path | None]:
    """Remove our entry only (a foreign ``workbench`` entry is left alone)."""
    return mcp_json.uninstall(config_path())
