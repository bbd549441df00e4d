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

The merge (``workbench.agents.flat_hooks``, shared with Windsurf) keeps the user's entries
exactly and first, writes ``"version": 1`` when the file has none, and checks both files before
either is written, so a refusal changes nothing. The MCP entry goes through
``workbench.agents.mcp_json`` (Cursor's ``mcpServers`` map).
"""

from __future__ import annotations

from pathlib import Path

from workbench.agents import flat_hooks, health, mcp_json
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


HOOKS = flat_hooks.FlatHooks(
    platform=NAME,
    scripts=SCRIPTS,
    error=CursorHooksError,
    not_json=(
        "Cursor hooks file {path} is not valid JSON ({exc}); fix it by hand (nothing was "
        "changed) and run the command again"
    ),
    not_object=(
        "Cursor hooks file {path} must hold a JSON object; fix it by hand (nothing was changed)"
    ),
    hooks_not_object=(
        '"hooks" in {path} is not a JSON object of event -> list of commands; fix it by hand '
        "(nothing was changed)"
    ),
    event_not_list=(
        '"{event}" in the hooks of {path} is not a list of {{"command": ...}} entries; fix it '
        "by hand (nothing was changed)"
    ),
    version=VERSION,
)
our_commands = HOOKS.our_commands


# ----- the agent module's shape (workbench/agents/__init__.py) ----------------------------------


def check() -> None:
    """Raise if ``install`` would refuse the hooks file or the MCP file; writes nothing."""
    HOOKS.check(hooks_path(), mcp_path(), REMOVE_HINT)


def check_uninstall() -> None:
    """Raise if ``uninstall`` would refuse the hooks file or the MCP file; writes nothing."""
    HOOKS.check_uninstall(hooks_path(), mcp_path())


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    return HOOKS.install(hooks_path(), mcp_path(), REMOVE_HINT, python, data_dir)


def uninstall() -> list[Change]:
    return HOOKS.uninstall(hooks_path(), mcp_path())


def checks() -> list[Check]:
    """``doctor``'s row: a note unless a file is broken or ours is stale (Cursor is opt-in)."""
    findings = [health.hooks(hooks_path(), our_commands), health.mcp(mcp_path(), mcp_json.entry)]
    return [health.agent_check(NAME, LABEL, detected(), findings)]
