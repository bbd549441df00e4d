"""Cursor: hooks in ``~/.cursor/hooks.json``, the MCP server in ``~/.cursor/mcp.json``.

Cursor's hooks file has its own shape, not Claude Code's: ``{"version": 1, "hooks": {event:
[{"command": "..."}]}}``, one flat list of commands per event, each run in turn with the
event's JSON on stdin (Cursor's hooks reference, https://cursor.com/docs/agent/hooks, as
copied in thedotmack/claude-mem ``docs/context/cursor-hooks-reference.md`` at commit
e2d1df56; claude-mem's ``src/services/integrations/CursorHooksInstaller.ts`` writes the same
shape and events). The user's file (``~/.cursor/hooks.json``) applies to every project.

Ours, each command ending in ``--platform cursor`` (``hooks/adapters/cursor.py``):

- beforeSubmitPrompt: ``user_prompt_submit.py``, then ``context_file.py`` (starts the service
  when it is down, refreshes ``.cursor/rules/workbench-context.mdc``);
- afterShellExecution, afterMCPExecution, afterFileEdit: ``post_tool_use.py``;
- stop: ``stop.py``, then ``context_file.py``.

The merge rules are ``workbench.claude_settings``'s, for this shape: the user's entries kept
exactly and first, ours recognised by script name (a moved checkout is replaced, not doubled),
nothing written when nothing changes, a timestamped backup before each write, an atomic
write. Both files are checked before either is written, so a refusal changes nothing. The MCP
entry goes through ``workbench.agents.mcp_json`` (Cursor's ``mcpServers`` map).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench import claude_settings
from workbench.agents import health, mcp_json
from workbench.agents.base import Change, Check
from workbench.errors import WorkbenchError

NAME = "cursor"
LABEL = "Cursor"
VERSION = 1  # the hooks file's schema version
# Cursor event -> our scripts, in the order Cursor is to run them.
SCRIPTS: dict[str, tuple[str, ...]] = {
    "beforeSubmitPrompt": ("user_prompt_submit.py", "context_file.py"),
    "afterShellExecution": ("post_tool_use.py",),
    "afterMCPExecution": ("post_tool_use.py",),
    "afterFileEdit": ("post_tool_use.py",),
    "stop": ("stop.py", "context_file.py"),
}
REMOVE_HINT = "delete its entry under mcpServers in ~/.cursor/mcp.json"


class CursorHooksError(WorkbenchError):
    code = "CURSOR_HOOKS_INVALID"


def config_dir() -> Path:
    return Path.home() / ".cursor"


def hooks_path() -> Path:
    return config_dir() / "hooks.json"


def mcp_path() -> Path:
    return config_dir() / "mcp.json"


def detected() -> bool:
    return config_dir().is_dir()


# ----- the hooks file ---------------------------------------------------------------------------


def read_hooks(path: Path) -> dict[str, Any]:
    """The hooks file (``{}`` when absent); raises ``CursorHooksError`` naming what is wrong."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CursorHooksError(
            f"Cursor hooks file {path} is not valid JSON ({exc}); fix it by hand (nothing was "
            "changed) and run the command again"
        ) from None
    if not isinstance(data, dict):
        raise CursorHooksError(
            f"Cursor hooks file {path} must hold a JSON object; fix it by hand (nothing was "
            "changed)"
        )
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise CursorHooksError(
            f'"hooks" in {path} is not a JSON object of event -> list of commands; fix it by '
            "hand (nothing was changed)"
        )
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            raise CursorHooksError(
                f'"{event}" in the hooks of {path} is not a list of {{"command": ...}} '
                "entries; fix it by hand (nothing was changed)"
            )
    return data


def is_ours(entry: Any) -> bool:
    """An entry whose command runs one of workbench's hook scripts."""
    command = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(command, str) and bool(claude_settings.OURS.search(command))


def without_ours(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` without our entries; a list (or ``hooks``) we emptied is dropped."""
    result = json.loads(json.dumps(config))
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    emptied = False
    for event in list(hooks):
        entries = hooks[event]
        kept = [entry for entry in entries if not is_ours(entry)]
        if len(kept) == len(entries):
            continue
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
            emptied = True
    if emptied and not hooks:
        del result["hooks"]
    return result


def with_ours(
    config: dict[str, Any], python: str | None = None, data_dir: Path | None = None
) -> dict[str, Any]:
    """``config`` with exactly our current entries, after the user's, for each event."""
    result = without_ours(config)
    if "version" not in result:
        result = {"version": VERSION, **result}
    hooks = result.setdefault("hooks", {})
    for event, scripts in SCRIPTS.items():
        hooks.setdefault(event, []).extend(
            {"command": claude_settings.hook_command(script, python, data_dir, NAME)}
            for script in scripts
        )
    return result


def installed(path: Path) -> bool:
    """True when the hooks file holds at least one of our entries."""
    current = read_hooks(path)
    return current != without_ours(current)


# ----- the agent module's shape (workbench/agents/__init__.py) ----------------------------------


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    path = hooks_path()
    current = read_hooks(path)  # refuse before writing anything
    mcp_json.check(mcp_path(), REMOVE_HINT)
    merged = with_ours(current, python, data_dir)
    hooks = Change("workbench hooks", path, False)
    if merged != current:
        hooks = Change("workbench hooks", path, True, claude_settings.write(path, merged))
    entry = mcp_json.server_entry(python, data_dir)
    changed, backup = mcp_json.install(mcp_path(), entry, REMOVE_HINT)
    return [hooks, Change("workbench MCP server", mcp_path(), changed, backup)]


def uninstall() -> list[Change]:
    path = hooks_path()
    current = read_hooks(path)
    cleaned = without_ours(current)
    hooks = Change("workbench hooks", path, False)
    if cleaned != current:
        hooks = Change("workbench hooks", path, True, claude_settings.write(path, cleaned))
    changed, backup = mcp_json.uninstall(mcp_path())
    return [hooks, Change("workbench MCP server", mcp_path(), changed, backup)]


def our_commands(path: Path) -> list[str]:
    """The commands of our entries in the hooks file (``doctor`` checks what they run)."""
    hooks = read_hooks(path).get("hooks", {})
    return [str(e["command"]) for entries in hooks.values() for e in entries if is_ours(e)]


def checks() -> list[Check]:
    """``doctor``'s row: a note unless a file is broken or ours is stale (Cursor is opt-in)."""
    findings = [health.hooks(hooks_path(), our_commands), health.mcp(mcp_path(), mcp_json.entry)]
    return [health.agent_check(NAME, LABEL, detected(), findings)]
