"""Windsurf: hooks in ``~/.codeium/windsurf/hooks.json``, MCP in ``mcp_config.json`` beside it.

Windsurf's hook file has its own shape ("Cascade Hooks", "Configuration",
https://docs.windsurf.com/windsurf/cascade/hooks): ``{"hooks": {"<agent_action_name>":
[{"command", "show_output", "working_directory"?}]}}``, one flat list per event, no matcher,
no timeout; the user-level file is ``~/.codeium/windsurf/hooks.json``. Ours are recognised by
the shape of our command (``workbench.agents.claude_settings.is_our_command``), as in every agent's
file, and carry
``show_output: false``: stdout is never read, only shown in the Cascade UI. No
``working_directory`` is written, so each hook runs in the workspace root, which the adapter
(``hooks/adapters/windsurf.py``) takes as the cwd. ``post_cascade_response`` runs two scripts:
``stop.py`` (the turn's summary) and ``context_file.py`` (start the service if needed, replay
the spool, rewrite ``.windsurf/rules/workbench-context.md``: Windsurf's only way to get memory).

The merge is ``workbench.agents.flat_hooks``'s, shared with Cursor.

MCP: ``~/.codeium/windsurf/mcp_config.json``, ``{"mcpServers": {...}}``
(https://docs.windsurf.com/windsurf/cascade/mcp), through ``workbench.agents.mcp_json``.
"""

from __future__ import annotations

from pathlib import Path

from workbench.agents import flat_hooks, health, mcp_json
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


HOOKS = flat_hooks.FlatHooks(
    platform=NAME,
    scripts=SCRIPTS,
    error=WindsurfHooksError,
    not_json=(
        "{path} is not valid JSON ({exc}); fix it by hand (nothing was changed) and run the "
        "command again"
    ),
    not_object="{path} must hold a JSON object; nothing was changed",
    hooks_not_object='"hooks" in {path} is not a JSON object; fix it by hand (nothing was changed)',
    event_not_list=(
        '"hooks.{event}" in {path} is not a list of hooks; fix it by hand (nothing was changed)'
    ),
    entry_fields={"show_output": False},
)
our_commands = HOOKS.our_commands


def _remove_hint() -> str:
    return f"in Windsurf's MCP settings, or by editing {mcp_path()}"


def check() -> None:
    """Raise if ``install`` would refuse the hooks file or the MCP file; writes nothing."""
    HOOKS.check(hooks_path(), mcp_path(), _remove_hint())


def check_uninstall() -> None:
    """Raise if ``uninstall`` would refuse the hooks file or the MCP file; writes nothing."""
    HOOKS.check_uninstall(hooks_path(), mcp_path())


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    """Merge our hooks and MCP server in; both files are checked before either is written."""
    return HOOKS.install(hooks_path(), mcp_path(), _remove_hint(), python, data_dir)


def uninstall() -> list[Change]:
    """Take only our hooks and our MCP entry out."""
    return HOOKS.uninstall(hooks_path(), mcp_path())


def checks() -> list[Check]:
    """``doctor``'s row: a note unless a file is broken or ours is stale (Windsurf is opt-in)."""
    findings = [health.hooks(hooks_path(), our_commands), health.mcp(mcp_path(), mcp_json.entry)]
    return [health.agent_check(NAME, LABEL, detected(), findings)]
