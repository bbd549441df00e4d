"""Gemini CLI: hooks in ``~/.gemini/settings.json``.

Gemini reads Claude Code's hook shape (``workbench.agents.hook_json``) with its own event
names (SessionStart, BeforeAgent, AfterTool, AfterAgent, SessionEnd) and ``timeout`` in
milliseconds (google-gemini/gemini-cli ``docs/hooks/reference.md``, "Configuration schema").
No matcher is written: a group without one runs for every tool. Each command ends in
``--platform gemini``, which picks the hook adapter (``hooks/adapters/gemini.py``).
"""

from __future__ import annotations

from pathlib import Path

from workbench.agents import hook_json
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


def config_dir() -> Path:
    return Path.home() / ".gemini"


def settings_path() -> Path:
    return config_dir() / "settings.json"


def detected() -> bool:
    return config_dir().is_dir()


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    return [hook_json.install(settings_path(), SCRIPTS, python, data_dir, NAME)]


def uninstall() -> list[Change]:
    return [hook_json.uninstall(settings_path())]


def checks() -> list[Check]:
    return [hook_json.check(NAME, LABEL, settings_path(), detected())]
