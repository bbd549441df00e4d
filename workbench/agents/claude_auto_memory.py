"""Switch Claude Code's built-in auto-memory off at install, and give back exactly what was.

Claude Code keeps a memory of its own (``MEMORY.md`` files it writes and loads by itself);
beside workbench it is a second, competing memory in the same context window. Claude Code
reads ``CLAUDE_CODE_DISABLE_AUTO_MEMORY=1`` from the ``env`` object of its ``settings.json``.
claude-mem offers the same switch at install, only with the user's consent
(thedotmack/claude-mem ``src/npx-cli/commands/install.ts`` ``disableClaudeAutoMemory``, commit
e2d1df56), and its uninstall deletes the key whenever it reads ``"1"``, which also deletes a
value the user had set before. Ours records what was there before the first change, in
``workbench-auto-memory.json`` beside ``settings.json``: whether ``env`` existed and the
key's previous value (or none), and uninstall puts exactly that back, unless the user has
changed the key since (then theirs stays). Nothing is recorded when the key already was
``"1"``: there is nothing of ours to undo.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench import config_file, exact_json
from workbench.agents import claude_settings
from workbench.agents.base import Change, Check
from workbench.agents.claude_settings import ClaudeSettingsError
from workbench.errors import WorkbenchError

KEY = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
OFF = "1"
WHAT = f"Claude Code auto-memory switched off ({KEY}=1)"


def record_path() -> Path:
    return claude_settings.claude_config_dir() / "workbench-auto-memory.json"


def env_of(settings: dict[str, Any], path: Path) -> dict[str, Any]:
    found = settings.get("env", {})
    if not isinstance(found, dict):
        raise ClaudeSettingsError(
            f'"env" in {path} is not a JSON object; fix it by hand (nothing was changed) and '
            "run the command again"
        )
    return found


def check() -> None:
    """Raise if ``disable`` would refuse ``settings.json``; writes nothing."""
    path = claude_settings.settings_path()
    env_of(claude_settings.read(path), path)


def check_restore() -> None:
    """``check`` when there is something to restore (a bad ``env`` blocks nothing else)."""
    if _read_record() is not None:
        check()


def _read_record() -> dict[str, Any] | None:
    """What install recorded, or None (absent, or not ours to trust: then nothing is undone)."""
    text = config_file.read_text(record_path())
    try:
        found = exact_json.loads(text) if text else None
    except (ValueError, RecursionError):  # not JSON: not a record of ours
        return None
    if not isinstance(found, dict) or not isinstance(found.get("had_env"), bool):
        return None
    return found


def disable() -> Change:
    """Set the key to ``"1"`` in ``env`` (the rest of the file as it was), recording what was."""
    path = claude_settings.settings_path()
    with config_file.locked(path):
        current = claude_settings.read(path)
        env = env_of(current, path)
        if env.get(KEY) == OFF:
            return Change(WHAT, path, False)
        if _read_record() is None:
            record: dict[str, Any] = {"had_env": "env" in current}
            if KEY in env:
                record["previous"] = env[KEY]
            # exact_json: the previous value is written back as it was spelled (NaN, 1e400)
            config_file.write_text(record_path(), exact_json.dumps(record) + "\n")
        backup = claude_settings.write(path, {**current, "env": {**env, KEY: OFF}})
        return Change(WHAT, path, True, backup)


def restore() -> Change:
    """Put back what ``disable`` found: the previous value, or no key (and no ``env``)."""
    path = claude_settings.settings_path()
    what = f"Claude Code auto-memory setting ({KEY}) as before install"
    record = _read_record()
    if record is None:
        return Change(what, path, False)
    with config_file.locked(path):
        current = claude_settings.read(path)
        env = env_of(current, path)
        backup = None
        if env.get(KEY) == OFF:  # still ours: the user has not changed it since
            if "previous" in record:  # in its place: the key was there, ``disable`` kept it
                rest = {k: record["previous"] if k == KEY else v for k, v in env.items()}
            else:
                rest = {k: v for k, v in env.items() if k != KEY}
            if rest or record["had_env"]:
                restored = {**current, "env": rest}
            else:
                restored = {k: v for k, v in current.items() if k != "env"}
            backup = claude_settings.write(path, restored)
        record_path().unlink(missing_ok=True)
        return Change(what, path, backup is not None, backup)


def checks() -> list[Check]:
    """A note in ``doctor`` when auto-memory is off, saying whether workbench switched it."""
    path = claude_settings.settings_path()
    try:
        env = env_of(claude_settings.read(path), path)
    except (WorkbenchError, OSError):  # not JSON, not UTF-8, not a regular file...
        return []  # the hooks row reports an unreadable settings.json
    if env.get(KEY) != OFF:
        return []
    by = (
        "by workbench install; uninstall gives the previous setting back"
        if _read_record()
        else "by you"
    )
    return [
        Check(
            "claude auto-memory",
            None,
            f"Claude Code's own auto-memory is off ({KEY}=1 in {path}, {by})",
        )
    ]
