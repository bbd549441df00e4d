"""What ``workbench doctor`` says about one agent: its hooks and MCP server, in one row.

An agent module's ``checks()`` gathers one ``Finding`` per thing it installs (``hooks``,
``mcp``) and returns ``[agent_check(...)]``. The row is a note when the agent is not on this
machine, or is but never had workbench installed (opt-in per agent); a problem when its file
cannot be read, when only part of ours is there, or when what ours run is gone: an
interpreter or hook script that no longer exists is what a moved checkout or a deleted venv
leaves behind, and installing again rewrites the commands. An agent found with none of ours
but with our backups beside its files was uninstalled: a note, never a problem.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from workbench.agents import claude_settings, hook_json
from workbench.agents.base import Check
from workbench.errors import WorkbenchError

# ``WORKBENCH_DATA_DIR=… python -S …``: the assignments before the program.
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


# In the detail of an agent whose workbench entries were taken out (``uninstalled``); the
# ``doctor`` "agents" row reads it: nothing installed after an uninstall is not a problem.
UNINSTALLED = "it was uninstalled"


def uninstalled(path: Path) -> bool:
    """A backup that install or uninstall made is beside ``path``: workbench was here."""
    try:
        return any(path.parent.glob(f"{glob.escape(path.name)}.workbench-backup-*"))
    except OSError:
        return False


class Finding(NamedTuple):
    """One thing an agent gets from install, as found in its file."""

    what: str  # "hooks", "MCP server"
    path: Path
    installed: bool
    error: str | None = None  # the file cannot be read as the agent's config
    missing: tuple[str, ...] = ()  # files ours run that do not exist


def runnable(program: str) -> bool:
    """``program`` is an executable file (a path) or found on PATH (a bare name)."""
    if os.sep not in program:
        return shutil.which(program) is not None
    return Path(program).is_file() and os.access(program, os.X_OK)


def command_missing(command: str) -> list[str]:
    """The interpreter and hook scripts ``command`` runs that do not exist."""
    try:
        words = shlex.split(command)
    except ValueError:
        return [command]
    while words and ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return [command]
    missing = [] if runnable(words[0]) else [words[0]]
    scripts = [w for w in words[1:] if claude_settings.is_our_script(w)]
    return missing + [s for s in scripts if not Path(s).is_file()]


def _read_error(path: Path, exc: Exception) -> str:
    if isinstance(exc, WorkbenchError):
        return exc.message
    return f"cannot read {path} ({exc}); fix its permissions and run the command again"


def hooks(path: Path, commands: Callable[[Path], list[str]] = hook_json.commands) -> Finding:
    """Our hooks in ``path`` and what their commands run.

    ``commands`` reads our hook commands from the file: Claude Code's JSON hook shape by
    default; Cursor and Windsurf pass their own flat shape's reader.
    """
    try:
        found = commands(path)
    except (WorkbenchError, OSError) as exc:
        return Finding("hooks", path, False, _read_error(path, exc))
    missing = sorted({m for command in found for m in command_missing(command)})
    return Finding("hooks", path, bool(found), None, tuple(missing))


def mcp(path: Path, entry: Callable[[Path], dict[str, Any] | None]) -> Finding:
    """Our MCP server as ``entry(path)`` reads it, and whether its interpreter exists."""
    try:
        found = entry(path)
    except (WorkbenchError, OSError) as exc:
        return Finding("MCP server", path, False, _read_error(path, exc))
    if found is None:
        return Finding("MCP server", path, False)
    command = found.get("command")
    missing = () if isinstance(command, str) and runnable(command) else (str(command),)
    return Finding("MCP server", path, True, None, missing)


def agent_check(
    name: str, label: str, detected: bool, findings: list[Finding], required: bool = False
) -> Check:
    """One ``doctor`` row for agent ``name``.

    ``required`` (Claude Code, the default agent): found on this machine but without
    workbench is a problem rather than a note.
    """
    row = f"agent {name}"
    again = f"run `workbench install --agent {name}` again"
    if not detected:
        return Check(row, None, f"{label} not found on this machine")
    errors = [f"{f.what}: {f.error}" for f in findings if f.error]
    if errors:
        return Check(row, False, "; ".join(errors))
    missing = sorted({m for f in findings for m in f.missing})
    if missing:
        return Check(
            row,
            False,
            f"workbench's {' and '.join(f.what for f in findings if f.missing)} run "
            f"{', '.join(missing)}, which no longer exist (a moved checkout or a deleted "
            f"venv?): {again}",
        )
    absent = [f for f in findings if not f.installed]
    if not absent:
        return Check(row, True, "; ".join(f"{f.what} in {f.path}" for f in findings))
    if len(absent) < len(findings):
        return Check(
            row,
            False,
            "; ".join(f"{f.what} missing from {f.path}" for f in absent) + f": {again}",
        )
    hint = f"run `workbench install --agent {name}`"
    if any(uninstalled(f.path) for f in findings):
        # Trigger: none of ours is there, but a backup of ours is beside the file.
        # Why: uninstall (or the user) took workbench out on purpose; that is not a fault.
        # Outcome: a note, for Claude Code too, and the "agents" row stays quiet.
        return Check(row, None, f"{label} found, workbench not installed ({UNINSTALLED}; {hint}")
    if required:
        return Check(row, False, f"{label} found but workbench is not installed: {hint}")
    return Check(row, None, f"{label} found, workbench not installed ({hint} to use it)")
