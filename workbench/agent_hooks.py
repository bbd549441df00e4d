"""``workbench install --agent gemini|codex``: the hooks in Gemini CLI's and Codex CLI's files.

Both agents read Claude Code's hook shape, ``{"hooks": {Event: [{"matcher"?, "hooks":
[{"type": "command", "command", "timeout"}]}]}}``, so the merge rules of
``workbench.claude_settings`` apply unchanged (the user's entries kept exactly, ours found by
script name, idempotent, a timestamped backup, an atomic write). What differs, per agent:

- Gemini CLI: ``~/.gemini/settings.json``; events SessionStart, BeforeAgent, AfterTool,
  AfterAgent, SessionEnd; ``timeout`` in milliseconds (google-gemini/gemini-cli
  ``docs/hooks/reference.md``, "Configuration schema").
- Codex CLI: ``$CODEX_HOME/hooks.json`` (default ``~/.codex``); events SessionStart,
  UserPromptSubmit, PostToolUse, Stop (it has no SessionEnd); ``timeout`` in seconds
  (openai/codex ``codex-rs/config/src/hook_config.rs``, ``engine/discovery.rs``).

No matcher is written: both run a group without one for every tool. Each command ends in
``--platform <agent>``, which picks the hook adapter (``hooks/adapters/``). Claude Code keeps
its own module (``claude_settings``) and its MCP registration; these two get hooks only.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench import claude_settings

# agent -> event -> (script, matcher, timeout in the agent's unit)
AGENT_SCRIPTS: dict[str, dict[str, tuple[str, str | None, int]]] = {
    "gemini": {
        "SessionStart": ("session_start.py", None, 30_000),
        "BeforeAgent": ("user_prompt_submit.py", None, 10_000),
        "AfterTool": ("post_tool_use.py", None, 10_000),
        "AfterAgent": ("stop.py", None, 10_000),
        "SessionEnd": ("session_end.py", None, 10_000),
    },
    "codex": {
        "SessionStart": ("session_start.py", None, 30),
        "UserPromptSubmit": ("user_prompt_submit.py", None, 10),
        "PostToolUse": ("post_tool_use.py", None, 10),
        "Stop": ("stop.py", None, 10),
    },
}


def config_path(agent: str) -> Path:
    """The file ``agent`` reads its hooks from."""
    if agent == "gemini":
        return Path.home() / ".gemini" / "settings.json"
    if agent == "codex":
        home = os.environ.get("CODEX_HOME", "").strip()
        return (Path(home).expanduser() if home else Path.home() / ".codex") / "hooks.json"
    raise ValueError(f"no hook file for agent {agent!r}; known: {', '.join(AGENT_SCRIPTS)}")


def install(
    agent: str, python: str | None = None, data_dir: Path | None = None
) -> tuple[bool, Path | None]:
    """Merge our hooks into ``agent``'s file; return (changed, backup path)."""
    path = config_path(agent)
    current = claude_settings.read(path)
    merged = claude_settings.with_ours(
        current, python, data_dir, scripts=AGENT_SCRIPTS[agent], platform=agent
    )
    if merged == current:
        return False, None
    return True, claude_settings.write(path, merged)


def uninstall(agent: str) -> tuple[bool, Path | None]:
    """Remove only our hooks from ``agent``'s file; return (changed, backup path)."""
    path = config_path(agent)
    current = claude_settings.read(path)
    cleaned = claude_settings.without_ours(current)
    if cleaned == current:
        return False, None
    return True, claude_settings.write(path, cleaned)
