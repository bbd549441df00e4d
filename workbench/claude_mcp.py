"""Register workbench's MCP server with Claude Code (user scope), and take it out again.

Claude Code keeps user-scope MCP servers (``claude mcp add --scope user``) in its state file
``~/.claude.json`` — or ``$CLAUDE_CONFIG_DIR/.claude.json`` when that variable is set — under
the top-level key ``"mcpServers"``; ``~/.claude/settings.json`` is not read for them. Ours:

    "mcpServers": {"workbench": {"type": "stdio", "command": "<abs python>",
                   "args": ["-P", "-m", "workbench", "mcp"], "env": {...}}}

``-P`` (Python 3.11+) keeps the session's cwd off ``sys.path``: Claude Code starts the server
in the user's project, where a folder named ``workbench`` would otherwise shadow the package.
``env`` pins ``WORKBENCH_DATA_DIR`` when install was given one (as the hooks do), since
Claude Code's environment may not carry it.

The file is Claude Code's own state (history, accounts, per-project settings), so the same
rules as for the hooks apply, more strictly: every other key is kept exactly, install is
idempotent, each write is preceded by a backup and done atomically with the file's mode kept,
and an existing ``workbench`` entry that is not ours is never overwritten.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from workbench.claude_settings import ClaudeSettingsError, read, write

SERVER_NAME = "workbench"
MODULE_ARGS = ["-m", "workbench", "mcp"]


def config_path() -> Path:
    """``$CLAUDE_CONFIG_DIR/.claude.json`` when the variable is set, else ``~/.claude.json``."""
    env = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(env).expanduser() / ".claude.json" if env else Path.home() / ".claude.json"


def server_entry(python: str | None = None, data_dir: Path | None = None) -> dict[str, Any]:
    """The ``mcpServers.workbench`` value for this interpreter (and pinned data dir)."""
    env = {"WORKBENCH_DATA_DIR": str(data_dir)} if data_dir is not None else {}
    return {
        "type": "stdio",
        "command": python or sys.executable,
        "args": ["-P", *MODULE_ARGS],
        "env": env,
    }


def is_ours(entry: Any) -> bool:
    """An entry that runs ``-m workbench mcp`` (any interpreter, any flags before it)."""
    args = entry.get("args") if isinstance(entry, dict) else None
    if not isinstance(args, list):
        return False
    n = len(MODULE_ARGS)
    return any(args[i : i + n] == MODULE_ARGS for i in range(len(args) - n + 1))


def _servers(config: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ClaudeSettingsError(
            f'"mcpServers" in {path} is not a JSON object; fix it by hand (nothing was changed)'
        )
    return servers


def installed() -> bool:
    """True when Claude Code's config registers our MCP server (``doctor`` asks this)."""
    path = config_path()
    return is_ours(_servers(read(path), path).get(SERVER_NAME))


def check() -> None:
    """Raise ``ClaudeSettingsError`` if ``install`` would refuse; writes nothing.

    Lets ``workbench install`` validate this file before it touches settings.json, so a
    refusal here never leaves a half-done install.
    """
    path = config_path()
    existing = _servers(read(path), path).get(SERVER_NAME)
    if existing is not None and not is_ours(existing):
        raise ClaudeSettingsError(
            f"{path} already has an MCP server named {SERVER_NAME!r} that is not workbench's "
            f"(command {existing.get('command')!r}); rename or remove it (`claude mcp remove "
            f"{SERVER_NAME} -s user`) and run the command again; nothing was changed"
        )


def install(python: str | None = None, data_dir: Path | None = None) -> tuple[bool, Path | None]:
    """Add or update our entry; return (changed, backup path)."""
    check()
    path = config_path()
    current = read(path)
    entry = server_entry(python, data_dir)
    if _servers(current, path).get(SERVER_NAME) == entry:
        return False, None
    merged = {**current, "mcpServers": {**_servers(current, path), SERVER_NAME: entry}}
    return True, write(path, merged, new_mode=0o600)


def uninstall() -> tuple[bool, Path | None]:
    """Remove our entry only (a foreign ``workbench`` entry is left alone)."""
    path = config_path()
    current = read(path)
    servers = _servers(current, path)
    if not is_ours(servers.get(SERVER_NAME)):
        return False, None
    rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
    if rest:
        return True, write(path, {**current, "mcpServers": rest})
    # Ours was the only one: drop the key too, so the file is as it was before install.
    return True, write(path, {k: v for k, v in current.items() if k != "mcpServers"})
