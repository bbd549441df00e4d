"""Codex CLI: hooks in ``$CODEX_HOME/hooks.json`` (default ``~/.codex``).

Codex reads Claude Code's hook shape (``workbench.agents.hook_json``) and event names
(SessionStart, UserPromptSubmit, PostToolUse, Stop; it has no SessionEnd) with ``timeout`` in
seconds (openai/codex ``codex-rs/config/src/hook_config.rs``, ``engine/discovery.rs``).
Each command ends in ``--platform codex``, which picks ``hooks/adapters/codex.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.agents import hook_json
from workbench.agents.base import Change, Check

NAME = "codex"
LABEL = "Codex CLI"
SCRIPTS: hook_json.Scripts = {
    "SessionStart": ("session_start.py", None, 30),
    "UserPromptSubmit": ("user_prompt_submit.py", None, 10),
    "PostToolUse": ("post_tool_use.py", None, 10),
    "Stop": ("stop.py", None, 10),
}


def config_dir() -> Path:
    home = os.environ.get("CODEX_HOME", "").strip()
    return Path(home).expanduser() if home else Path.home() / ".codex"


def hooks_path() -> Path:
    return config_dir() / "hooks.json"


def detected() -> bool:
    return config_dir().is_dir()


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    return [hook_json.install(hooks_path(), SCRIPTS, python, data_dir, NAME)]


def uninstall() -> list[Change]:
    return [hook_json.uninstall(hooks_path())]


def checks() -> list[Check]:
    return [hook_json.check(NAME, LABEL, hooks_path(), detected())]
