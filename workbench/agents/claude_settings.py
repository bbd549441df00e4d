"""Merge workbench's hook entries into Claude Code's settings.json, and take them out again.

Claude Code reads ``$CLAUDE_CONFIG_DIR/settings.json`` (default ``~/.claude/settings.json``):
``{"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": …,
"timeout": …}]}], …}}``. Events without tools take no matcher.

Rules: the user's other hooks and settings are kept exactly, numbers as they were spelled
(``workbench.exact_json``); ours are recognised by the shape ``hook_command`` writes
(``is_our_command``: ``<python> -S <dir>/hooks/<script>.py``) *and* a script that is provably
ours (``is_our_script``), so a moved checkout is replaced, not duplicated, and a user's own
script in a ``hooks/`` folder is never touched; running install twice writes nothing the
second time. Files are read and written through ``workbench.config_file``: only a regular
file (or a symlink to one, which stays a link), a timestamped backup before each write, an
atomic replace, and a lock held by the callers for each read-modify-write.

Commands call the venv's interpreter by absolute path with ``-S`` (no site import): measured
at ~13 ms before any code runs, against ~57 ms through a pyenv shim (ENVIRONMENT.md).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench import config_file, exact_json
from workbench.errors import WorkbenchError

HOOKS_DIR = Path(__file__).resolve().parents[2] / "hooks"

# event → (script, matcher or None, timeout seconds)
HOOK_SCRIPTS: dict[str, tuple[str, str | None, int]] = {
    "SessionStart": ("session_start.py", None, 30),
    "UserPromptSubmit": ("user_prompt_submit.py", None, 10),
    "PreToolUse": ("pre_tool_use_read.py", "Read", 10),
    "PostToolUse": ("post_tool_use.py", "*", 10),
    "Stop": ("stop.py", None, 10),
    "SessionEnd": ("session_end.py", None, 10),
}
# Every script a hook command of ours runs (``hook_command``).
OUR_SCRIPTS = frozenset(
    {
        "session_start.py",
        "user_prompt_submit.py",
        "post_tool_use.py",
        "pre_tool_use_read.py",
        "stop.py",
        "session_end.py",
        "context_file.py",
    }
)
# ``WORKBENCH_DATA_DIR=…`` before the program (``hook_command`` with a pinned data dir).
DATA_DIR_ASSIGNMENT = re.compile(r"^WORKBENCH_DATA_DIR=")


class ClaudeSettingsError(WorkbenchError):
    code = "CLAUDE_SETTINGS_INVALID"


def claude_config_dir() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".claude"


def settings_path() -> Path:
    return claude_config_dir() / "settings.json"


def hook_command(
    script: str,
    python: str | None = None,
    data_dir: Path | None = None,
    platform: str | None = None,
) -> str:
    """The shell command the agent runs for one hook script (``--platform`` for non-Claude)."""
    parts = [python or sys.executable, "-S", str(HOOKS_DIR / script)]
    if platform is not None:
        parts += ["--platform", platform]
    command = " ".join(shlex.quote(p) for p in parts)
    if data_dir is not None:
        command = f"WORKBENCH_DATA_DIR={shlex.quote(str(data_dir))} {command}"
    return command


def read(path: Path) -> dict[str, Any]:
    """The file as a dict (``{}`` when absent), numbers kept as written (``exact_json``).

    What is at ``path`` must be a regular file or a link to one (``config_file``).
    """
    text = config_file.read_text(path)
    if text is None:
        return {}
    try:
        data = exact_json.loads(text or "{}")
    except (json.JSONDecodeError, RecursionError) as exc:  # Recursion: nested too deeply
        raise ClaudeSettingsError(
            f"{path} is not valid JSON ({exc}); fix it by hand (nothing was changed) and run "
            "the command again"
        ) from None
    if not isinstance(data, dict):
        raise ClaudeSettingsError(f"{path} must hold a JSON object; nothing was changed")
    return data


def is_our_script(word: str) -> bool:
    """``word`` is the path of one of our hook scripts, provably.

    ``<dir>/hooks/<script>.py`` where ``<dir>/hooks`` is this checkout's hooks folder or
    another workbench checkout's (it holds ``_runtime.py``), or where the script no longer
    exists (a moved or deleted checkout: nothing of the user's runs there). A user's own
    ``~/hooks/stop.py`` that exists is never ours, whatever runs it.
    """
    path = Path(word)
    if not (path.is_absolute() and path.parent.name == "hooks" and path.name in OUR_SCRIPTS):
        return False
    folder = path.parent
    try:
        return (
            folder == HOOKS_DIR
            or (folder / "_runtime.py").is_file()
            or not (path.exists() or path.is_symlink())
        )
    except (OSError, ValueError):  # a NUL byte, a path too long: not a path we wrote
        return False


def is_our_command(command: Any) -> bool:
    """``command`` has the exact shape ``hook_command`` writes, from any checkout or venv.

    ``[WORKBENCH_DATA_DIR=…] <python> -S <dir>/hooks/<script>.py [--platform NAME]``, the
    words shell-quoted: a moved checkout is still ours (replaced, not doubled), while a
    user's own ``python3 ~/.cursor/hooks/stop.py`` or ``./hooks/stop.py`` never is.
    """
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words and DATA_DIR_ASSIGNMENT.match(words[0]):
        words = words[1:]
    if len(words) not in (3, 5) or words[1] != "-S" or not is_our_script(words[2]):
        return False
    return len(words) == 3 or (words[3] == "--platform" and bool(words[4]))


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and is_our_command(entry.get("command"))


def without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` with every workbench hook removed (Claude-shaped groups).

    Only what our removal emptied is dropped (a group, an event's list, ``hooks``): a user's
    own empty group or list stays, so a file without ours compares equal to itself and is
    never rewritten.
    """
    return without_hook_entries(settings, _without_ours_in_groups)


def _without_ours_in_groups(groups: list[Any]) -> tuple[list[Any], bool]:
    """One event's groups without our hooks; a group we emptied goes, a user's empty one stays."""
    kept, removed = [], False
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            mine = [h for h in group["hooks"] if not _is_ours(h)]
            if len(mine) < len(group["hooks"]):
                removed = True
                if not mine:
                    continue
                group = {**group, "hooks": mine}
        kept.append(group)
    return kept, removed


def without_hook_entries(
    config: dict[str, Any], prune: Callable[[list[Any]], tuple[list[Any], bool]]
) -> dict[str, Any]:
    """A copy of ``config`` whose ``hooks`` event lists went through ``prune``.

    ``prune(entries)`` returns the kept entries and whether it removed any. Shared by every
    hooks-file shape (Claude's groups here, Cursor's and Windsurf's flat lists in
    ``workbench.agents.flat_hooks``): only what the removal emptied is dropped (an event's
    list, then ``hooks`` itself), so a file holding nothing of ours compares equal to itself
    and is never rewritten.
    """
    result: dict[str, Any] = copy.deepcopy(config)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    emptied = False
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        kept, removed = prune(entries)
        if not removed:
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
    settings: dict[str, Any],
    python: str | None = None,
    data_dir: Path | None = None,
    scripts: dict[str, tuple[str, str | None, int]] | None = None,
    platform: str | None = None,
) -> dict[str, Any]:
    """``settings`` with exactly one current workbench entry per event, nothing moved.

    Our entry is replaced where it stands; only an event without one gets ours appended.
    Why: Codex keys the user's trust in each hook by its position (``<event>:<group>:<hook>``,
    ``workbench.agents.codex_trust``); moving our group to the end also moved the user's
    groups after it, and the next run silently ran neither (issue 20 item 7).
    """
    chosen = scripts or HOOK_SCRIPTS
    result: dict[str, Any] = copy.deepcopy(settings)
    hooks = result.setdefault("hooks", {})
    for event in list(hooks):
        groups = hooks[event]
        if not (isinstance(groups, list) and any(_holds_ours(g) for g in groups)):
            continue
        if event in chosen:
            hooks[event] = _ours_in_place(
                groups, _our_group(event, chosen, python, data_dir, platform)
            )
            continue
        kept, _ = _without_ours_in_groups(groups)  # an event we no longer register
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    for event in chosen:
        groups = hooks.get(event)
        if not (isinstance(groups, list) and any(_holds_ours(g) for g in groups)):
            hooks.setdefault(event, []).append(
                _our_group(event, chosen, python, data_dir, platform)
            )
    return result


def _our_group(
    event: str,
    scripts: dict[str, tuple[str, str | None, int]],
    python: str | None,
    data_dir: Path | None,
    platform: str | None,
) -> dict[str, Any]:
    script, matcher, timeout = scripts[event]
    group: dict[str, Any] = {}
    if matcher is not None:
        group["matcher"] = matcher
    group["hooks"] = [
        {
            "type": "command",
            "command": hook_command(script, python, data_dir, platform),
            "timeout": timeout,
        }
    ]
    return group


def _holds_ours(group: Any) -> bool:
    return (
        isinstance(group, dict)
        and isinstance(group.get("hooks"), list)
        and any(_is_ours(h) for h in group["hooks"])
    )


def _ours_in_place(groups: list[Any], ours: dict[str, Any]) -> list[Any]:
    """``groups`` with the first of our entries replaced by ``ours``, any other of ours gone.

    A group holding only ours becomes ``ours`` (its matcher too); in a group the user shares
    with ours, only our hook is replaced. Every other group and hook keeps its place.
    """
    out: list[Any] = []
    placed = False
    for group in copy.deepcopy(groups):
        if not _holds_ours(group):
            out.append(group)
            continue
        if all(_is_ours(h) for h in group["hooks"]):
            if not placed:
                out.append(ours)
                placed = True
            continue
        kept = []
        for hook in group["hooks"]:
            if not _is_ours(hook):
                kept.append(hook)
            elif not placed:
                kept.append(ours["hooks"][0])
                placed = True
        out.append({**group, "hooks": kept})
    return out


def write(path: Path, data: dict[str, Any], new_mode: int = 0o644) -> Path | None:
    """Back up the current file (if any) and write ``data`` atomically; return the backup.

    Numbers read with ``read`` are written as they were spelled. The backup and the new file
    keep the current file's permissions (``~/.claude.json`` is owner-only and holds account
    state); a file that did not exist gets ``new_mode``. A symlink is followed, and kept.
    """
    return write_text(path, exact_json.dumps(data, indent=2) + "\n", new_mode)


def write_text(path: Path, text: str, new_mode: int = 0o644) -> Path | None:
    """``write`` for any text (an agent's TOML too): ``workbench.config_file.write_text``."""
    return config_file.write_text(path, text, new_mode)
