"""Claude Code: hooks in ``settings.json``, the MCP server in ``.claude.json`` (user scope).

Both files are checked before either is written, so a refusal (a foreign ``workbench`` MCP
entry, a file that is not JSON) leaves both untouched. The merge rules live in
``workbench.agents.claude_settings`` and ``workbench.agents.claude_mcp``.
"""

from __future__ import annotations

from pathlib import Path

from workbench.agents import (
    claude_auto_memory,
    claude_mcp,
    claude_settings,
    health,
    hook_json,
    mcp_json,
)
from workbench.agents.base import Change, Check
from workbench.errors import WorkbenchError

NAME = "claude"
LABEL = "Claude Code"


def config_dir() -> Path:
    return claude_settings.claude_config_dir()


def detected() -> bool:
    return config_dir().is_dir()


def check() -> None:
    """Raise if ``install`` would refuse (a file that is not JSON, a foreign server)."""
    hook_json.check_file(claude_settings.settings_path(), claude_settings.HOOK_SCRIPTS)
    claude_mcp.check()


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    check()  # refuse before writing anything
    hooks = hook_json.install(
        claude_settings.settings_path(), claude_settings.HOOK_SCRIPTS, python, data_dir, None
    )
    changed, backup = claude_mcp.install(python, data_dir)
    return [hooks, Change("workbench MCP server", claude_mcp.config_path(), changed, backup)]


def check_uninstall() -> None:
    """Raise if ``uninstall`` would refuse either file; writes nothing."""
    claude_settings.read(claude_settings.settings_path())
    claude_mcp.check_uninstall()
    claude_auto_memory.check_restore()


def uninstall() -> list[Change]:
    check_uninstall()  # refuse before writing anything
    hooks = hook_json.uninstall(claude_settings.settings_path())
    changed, backup = claude_mcp.uninstall()
    memory = claude_auto_memory.restore()  # what install switched off, back as it was
    mcp = Change("workbench MCP server", claude_mcp.config_path(), changed, backup)
    return [hooks, mcp, *([memory] if memory.changed else [])]


def checks() -> list[Check]:
    """Claude Code is the default agent: found without workbench is a problem, not a note."""
    findings = [
        health.hooks(claude_settings.settings_path()),
        health.mcp(claude_mcp.config_path(), mcp_json.entry),
    ]
    row = health.agent_check(NAME, LABEL, detected(), findings, required=True)
    plugin = enabled_plugin()
    if plugin is not None:
        row = _with_plugin(row, findings, plugin)
    return [row, *claude_auto_memory.checks()]


def enabled_plugin() -> str | None:
    """The id of workbench's Claude Code plugin when settings.json enables it
    (``workbench plugin build``; ``enabledPlugins: {"workbench@<marketplace>": true}``)."""
    try:
        enabled = claude_settings.read(claude_settings.settings_path()).get("enabledPlugins")
    except (WorkbenchError, OSError):
        return None
    if not isinstance(enabled, dict):
        return None
    return next(
        (
            k
            for k, v in enabled.items()
            if isinstance(k, str) and k.startswith("workbench@") and v is True
        ),
        None,
    )


def _with_plugin(row: Check, findings: list[health.Finding], plugin: str) -> Check:
    """The plugin is an install too: alone it is fine; beside our settings hooks, every hook
    runs twice, which is a problem with a fix."""
    if findings[0].installed:
        return Check(
            row.name,
            False,
            f"workbench's hooks are in {findings[0].path} and in the plugin {plugin}: each hook "
            "runs twice; run `workbench uninstall` (the plugin stays) or `claude plugin "
            f"uninstall {plugin}`",
        )
    if row.ok is False and not any(f.error or f.missing for f in findings):
        return Check(row.name, True, f"as the Claude Code plugin {plugin}")
    return row
