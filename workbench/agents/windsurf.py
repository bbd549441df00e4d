"""Windsurf: hooks in ``~/.codeium/windsurf/hooks.json``, MCP in ``mcp_config.json`` beside it.

Windsurf's hook file has its own shape ("Cascade Hooks", "Configuration",
https://docs.windsurf.com/windsurf/cascade/hooks): ``{"hooks": {"<agent_action_name>":
[{"command", "show_output", "working_directory"?}]}}``, one flat list per event, no matcher,
no timeout; the user-level file is ``~/.codeium/windsurf/hooks.json``. Ours are recognised by
script name (``workbench.claude_settings.OURS``), as in every agent's file, and carry
``show_output: false``: stdout is never read, only shown in the Cascade UI. No
``working_directory`` is written, so each hook runs in the workspace root, which the adapter
(``hooks/adapters/windsurf.py``) takes as the cwd. ``post_cascade_response`` runs two scripts:
``stop.py`` (the turn's summary) and ``context_file.py`` (start the service if needed, replay
the spool, rewrite ``.windsurf/rules/workbench-context.md``: Windsurf's only way to get memory).

MCP: ``~/.codeium/windsurf/mcp_config.json``, ``{"mcpServers": {...}}``
(https://docs.windsurf.com/windsurf/cascade/mcp), through ``workbench.agents.mcp_json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench import claude_settings
from workbench.agents import health, mcp_json
from workbench.agents.base import Change, Check
from workbench.errors import WorkbenchError

NAME = "windsurf"
LABEL = "Windsurf"
# agent_action_name -> our scripts, in the order they run.
SCRIPTS: dict[str, tuple[str, ...]] = {
    "pre_user_prompt": ("user_prompt_submit.py",),
    "post_read_code": ("post_tool_use.py",),
    "post_write_code": ("post_tool_use.py",),
    "post_run_command": ("post_tool_use.py",),
    "post_mcp_tool_use": ("post_tool_use.py",),
    "post_cascade_response": ("stop.py", "context_file.py"),
}


class WindsurfHooksError(WorkbenchError):
    code = "WINDSURF_HOOKS_INVALID"


def config_dir() -> Path:
    return Path.home() / ".codeium" / "windsurf"


def hooks_path() -> Path:
    return config_dir() / "hooks.json"


def mcp_path() -> Path:
    return config_dir() / "mcp_config.json"


def detected() -> bool:
    return config_dir().is_dir()


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and bool(
        claude_settings.OURS.search(str(entry.get("command", "")))
    )


def _events(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """The ``hooks`` object of ``config`` (empty when absent); refuses a shape we cannot merge."""
    hooks = config.get("hooks", {})
    if not isinstance(hooks, dict):
        raise WindsurfHooksError(
            f'"hooks" in {path} is not a JSON object; fix it by hand (nothing was changed)'
        )
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            raise WindsurfHooksError(
                f'"hooks.{event}" in {path} is not a list of hooks; fix it by hand '
                "(nothing was changed)"
            )
    return hooks


def without_ours(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A copy of ``config`` with every workbench hook removed (emptied events dropped)."""
    result = json.loads(json.dumps(config))
    hooks = _events(result, path)
    for event in list(hooks):
        kept = [entry for entry in hooks[event] if not _is_ours(entry)]
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        result.pop("hooks", None)
    return result


def with_ours(
    config: dict[str, Any], path: Path, python: str | None, data_dir: Path | None
) -> dict[str, Any]:
    """``config`` with exactly our current entries, after the user's own, per event."""
    result = without_ours(config, path)
    hooks = result.setdefault("hooks", {})
    for event, scripts in SCRIPTS.items():
        hooks.setdefault(event, []).extend(
            {
                "command": claude_settings.hook_command(script, python, data_dir, NAME),
                "show_output": False,
            }
            for script in scripts
        )
    return result


def installed(path: Path | None = None) -> bool:
    """True when the hooks file holds at least one of our hooks."""
    path = path or hooks_path()
    current = claude_settings.read(path)
    return current != without_ours(current, path)


def _remove_hint() -> str:
    return f"in Windsurf's MCP settings, or by editing {mcp_path()}"


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    """Merge our hooks and MCP server in; both files are checked before either is written."""
    path = hooks_path()
    current = claude_settings.read(path)
    merged = with_ours(current, path, python, data_dir)
    mcp_json.check(mcp_path(), _remove_hint())
    if merged == current:
        hooks = Change("workbench hooks", path, False)
    else:
        hooks = Change("workbench hooks", path, True, claude_settings.write(path, merged))
    changed, backup = mcp_json.install(
        mcp_path(), mcp_json.server_entry(python, data_dir), _remove_hint()
    )
    return [hooks, Change("workbench MCP server", mcp_path(), changed, backup)]


def uninstall() -> list[Change]:
    """Take only our hooks and our MCP entry out."""
    path = hooks_path()
    current = claude_settings.read(path)
    cleaned = without_ours(current, path)
    if cleaned == current:
        hooks = Change("workbench hooks", path, False)
    else:
        hooks = Change("workbench hooks", path, True, claude_settings.write(path, cleaned))
    changed, backup = mcp_json.uninstall(mcp_path())
    return [hooks, Change("workbench MCP server", mcp_path(), changed, backup)]


def our_commands(path: Path) -> list[str]:
    """The commands of our entries in the hooks file (``doctor`` checks what they run)."""
    hooks = _events(claude_settings.read(path), path)
    return [str(e["command"]) for entries in hooks.values() for e in entries if _is_ours(e)]


def checks() -> list[Check]:
    """``doctor``'s row: a note unless a file is broken or ours is stale (Windsurf is opt-in)."""
    findings = [health.hooks(hooks_path(), our_commands), health.mcp(mcp_path(), mcp_json.entry)]
    return [health.agent_check(NAME, LABEL, detected(), findings)]
