"""Paths an agent or a user names, resolved inside the project root and never outside it.

Every file the code tools open goes through ``inside``: the path is joined to its base
(the root for the MCP tools, the shell's cwd for the CLI), resolved with symlinks
followed, and refused unless the result lies in the resolved root. So ``../x``, an
absolute path elsewhere, and a symlink inside the project that points out of it are all
refused with the same message, before anything is read.

``project_root`` is where a session's code lives when nobody says: the agent's project dir
(``CLAUDE_PROJECT_DIR``), else the git work tree holding the cwd, else the cwd.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.errors import InvalidInput, NotFound

MAX_PATH_CHARS = 4096


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a dir or a worktree file)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def project_root(explicit: str | None = None) -> Path:
    """The root the tools stay inside: ``explicit``, the agent's project dir, the git root."""
    if explicit:
        return checked_root(explicit)
    agent_dir = os.environ.get("CLAUDE_PROJECT_DIR")
    if agent_dir:
        return checked_root(agent_dir)
    cwd = Path.cwd().resolve()
    return git_root(cwd) or cwd


def checked_root(root: str) -> Path:
    """``root`` resolved; it must be an existing directory."""
    _check_text(root, "root")
    resolved = _resolve(Path(root), root)
    if not _exists(resolved) or not resolved.is_dir():
        raise NotFound(f"project root {root!r} is not a directory; pass an existing folder")
    return resolved


def inside(root: Path, given: str, base: Path | None = None) -> Path:
    """``given`` (relative to ``base``, default ``root``) resolved; it must lie in ``root``."""
    _check_text(given, "path")
    # No ``~`` expansion: that is the shell's job, and an agent's ``~x`` is a name.
    candidate = Path(given)
    if not candidate.is_absolute():
        candidate = (base or root) / candidate
    resolved = _resolve(candidate, given)
    if resolved != root and root not in resolved.parents:
        raise InvalidInput(
            f"{given!r} resolves to {str(resolved)!r}, outside the project root {str(root)!r} "
            "(through '..', an absolute path or a symlink); pass a path inside the project"
        )
    if not _exists(resolved):
        raise NotFound(f"{given!r} does not exist under {str(root)!r}; check the path")
    return resolved


def shown(root: Path, path: Path) -> str:
    """``path`` as people read it: relative to the root, with forward slashes."""
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
    return relative or "."


def _resolve(path: Path, given: str) -> Path:
    """``path`` with symlinks followed; a loop or an unencodable name is the caller's error."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop (3.11)
        raise InvalidInput(f"cannot resolve {given!r} ({exc}); pass a plain path") from None


def _exists(path: Path) -> bool:
    """False for a missing path, and for one the OS cannot even look up (name too long)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _check_text(value: str, what: str) -> None:
    if not value or not value.strip():
        raise InvalidInput(f"the {what} is empty; pass a file or folder path")
    if "\0" in value:
        raise InvalidInput(f"the {what} holds a NUL byte; pass a plain file path")
    if len(value) > MAX_PATH_CHARS:
        raise InvalidInput(f"the {what} is {len(value):,} characters long; the limit is 4,096")
