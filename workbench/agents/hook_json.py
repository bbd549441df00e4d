"""Hooks in Claude Code's JSON shape, in any agent's file (Claude Code, Gemini CLI, Codex CLI).

The shape is ``{"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command", "command",
"timeout"}]}]}}``; the merge rules are ``workbench.agents.claude_settings``'s (the user's entries
kept exactly, ours found by the shape of our command (``claude_settings.is_our_command``),
idempotent, a timestamped backup, an atomic write under the file's lock).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench import config_file
from workbench.agents import claude_settings
from workbench.agents.base import Change, Check
from workbench.agents.claude_settings import ClaudeSettingsError

# event -> (script, matcher or None, timeout in the agent's unit)
Scripts = dict[str, tuple[str, str | None, int]]


def refuse_bad_shape(config: dict[str, Any], path: Path, scripts: Scripts) -> None:
    """Raise ``ClaudeSettingsError`` where our hooks cannot be merged in; writes nothing.

    ``"hooks"`` must be an object and each of our events in it a list; anything else in it
    (Gemini's ``"enabled": true``, events we do not use) is the user's and left alone.
    """
    hooks = config.get("hooks", {})
    fix = "fix it by hand (nothing was changed) and run the command again"
    if not isinstance(hooks, dict):
        raise ClaudeSettingsError(f'"hooks" in {path} is not a JSON object; {fix}')
    for event in scripts:
        if event in hooks and not isinstance(hooks[event], list):
            raise ClaudeSettingsError(f'"hooks.{event}" in {path} is not a JSON array; {fix}')


def check_file(path: Path, scripts: Scripts) -> None:
    """Raise if ``install`` would refuse ``path`` (not JSON, or the wrong shape)."""
    refuse_bad_shape(claude_settings.read(path), path, scripts)


def install(
    path: Path, scripts: Scripts, python: str | None, data_dir: Path | None, platform: str | None
) -> Change:
    """Merge our hooks into ``path`` (under its lock: concurrent installs serialise)."""
    with config_file.locked(path):
        current = claude_settings.read(path)
        refuse_bad_shape(current, path, scripts)
        merged = claude_settings.with_ours(
            current, python, data_dir, scripts=scripts, platform=platform
        )
        if merged == current:
            return Change("workbench hooks", path, False)
        return Change("workbench hooks", path, True, claude_settings.write(path, merged))


def uninstall(path: Path) -> Change:
    """Take only our hooks out of ``path``."""
    with config_file.locked(path):
        current = claude_settings.read(path)
        cleaned = claude_settings.without_ours(current)
        if cleaned == current:
            return Change("workbench hooks", path, False)
        return Change("workbench hooks", path, True, claude_settings.write(path, cleaned))


def installed(path: Path) -> bool:
    """True when ``path`` holds at least one of our hooks."""
    current = claude_settings.read(path)
    return current != claude_settings.without_ours(current)


def commands(path: Path) -> list[str]:
    """The commands of our hooks in ``path`` (``doctor`` checks what they run)."""
    hooks = claude_settings.read(path).get("hooks")
    groups = (
        [g for v in hooks.values() if isinstance(v, list) for g in v]
        if isinstance(hooks, dict)
        else []
    )
    return [
        str(h["command"])
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
        if isinstance(h, dict) and claude_settings.is_our_command(h.get("command"))
    ]


def check(agent: str, label: str, path: Path, detected: bool) -> Check:
    """``doctor``'s row for an opt-in agent that gets only hooks (``workbench.agents.health``)."""
    from workbench.agents import health  # health imports this module

    return health.agent_check(agent, label, detected, [health.hooks(path)])
