"""Gemini CLI: hooks and the MCP server in ``~/.gemini/settings.json``.

The folder is ``$GEMINI_CLI_HOME/.gemini`` when that variable is set (google-gemini/gemini-cli
``packages/core/src/utils/paths.ts`` ``homedir()``, commit 5411f113). Gemini reads Claude
Code's hook shape (``workbench.agents.hook_json``) with its own event names (SessionStart,
BeforeAgent, AfterTool, AfterAgent, SessionEnd) and ``timeout`` in milliseconds
(``docs/hooks/reference.md``, "Configuration schema"). No matcher is written: a group without
one runs for every tool. Each command ends in ``--platform gemini``, which picks the hook
adapter (``hooks/adapters/gemini.py``).

The MCP server is ``mcpServers.workbench`` with ``command``, ``args``, ``env``
(``docs/tools/mcp-server.md`` at the same commit, "Configuration structure";
``workbench.agents.mcp_json``).
Hooks and server share the file, so both are merged and written in one go: one backup, the
user's own file, and a refusal (a foreign ``workbench`` server) changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench import config_file
from workbench.agents import claude_settings, health, hook_json, mcp_json
from workbench.agents.base import Change, Check

NAME = "gemini"
LABEL = "Gemini CLI"
SCRIPTS: hook_json.Scripts = {
    "SessionStart": ("session_start.py", None, 30_000),
    "BeforeAgent": ("user_prompt_submit.py", None, 10_000),
    "AfterTool": ("post_tool_use.py", None, 10_000),
    "AfterAgent": ("stop.py", None, 10_000),
    "SessionEnd": ("session_end.py", None, 10_000),
}
REMOVE_HINT = f"`gemini mcp remove --scope user {mcp_json.SERVER_NAME}`"
HOOKS, MCP = "workbench hooks", "workbench MCP server"


def config_dir() -> Path:
    home = os.environ.get("GEMINI_CLI_HOME", "").strip()
    return (Path(home).expanduser() if home else Path.home()) / ".gemini"


def settings_path() -> Path:
    return config_dir() / "settings.json"


def detected() -> bool:
    return config_dir().is_dir()


def check() -> None:
    """Raise if ``install`` would refuse (not JSON, a foreign server); writes nothing."""
    path = settings_path()
    current = claude_settings.read(path)
    hook_json.refuse_bad_shape(current, path, SCRIPTS)
    mcp_json.refuse_foreign(current, path, REMOVE_HINT)


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    check()
    path = settings_path()
    with config_file.locked(path):
        return _install(path, python, data_dir)


def _install(path: Path, python: str | None, data_dir: Path | None) -> list[Change]:
    current = claude_settings.read(path)
    hook_json.refuse_bad_shape(current, path, SCRIPTS)
    mcp_json.refuse_foreign(current, path, REMOVE_HINT)
    hooked = claude_settings.with_ours(current, python, data_dir, scripts=SCRIPTS, platform=NAME)
    merged = mcp_json.with_server(hooked, mcp_json.server_entry(python, data_dir, NAME), path)
    return _write(path, current, hooked, merged)


def check_uninstall() -> None:
    """Raise if ``uninstall`` would refuse (not JSON, ``mcpServers`` not an object)."""
    mcp_json.check_uninstall(settings_path())


def uninstall() -> list[Change]:
    check_uninstall()
    path = settings_path()
    with config_file.locked(path):
        current = claude_settings.read(path)
        unhooked = claude_settings.without_ours(current)
        return _write(path, current, unhooked, mcp_json.without_server(unhooked, path))


def _write(path: Path, current: dict, hooked: dict, final: dict) -> list[Change]:
    """Write ``final`` once if anything changed; one ``Change`` each for hooks and server."""
    hooks_changed = hooked != current
    mcp_changed = final != hooked
    backup = claude_settings.write(path, final) if final != current else None
    return [Change(HOOKS, path, hooks_changed, backup), Change(MCP, path, mcp_changed, backup)]


def checks() -> list[Check]:
    path = settings_path()
    return [
        health.agent_check(
            NAME, LABEL, detected(), [health.hooks(path), health.mcp(path, mcp_json.entry)]
        )
    ]
