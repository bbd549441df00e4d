"""Which folders may get a memory file: strictly inside the project root, and not denied.

Every folder is taken by its real path (``os.path.realpath``), so a symlink inside the project
that leads elsewhere (``vendor -> /usr/lib``, ``link -> ../../other``) is outside it, and
skipped. The root itself is skipped, as claude-mem does: its CLAUDE.md / AGENTS.md holds the
user's project-wide instructions. Skipped too: any folder with a segment in ``DENIED`` (VCS
metadata, dependencies, caches, build output: claude-mem's ``EXCLUDED_UNSAFE_DIRECTORIES``
and its directory walk's ignore list), and any folder matching one of the user's
``folder_memory_exclude`` globs (relative to the root, matching the folder or a parent:
``docs`` also excludes ``docs/api``). A memory file that is a symlink, or not a regular file,
is never written through.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

DENIED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        "build",
        "dist",
        "res",
        ".venv",
        "venv",
        ".tox",
        ".next",
        ".nuxt",
        ".turbo",
        ".cache",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "coverage",
        "target",
        "vendor",
        "site-packages",
        ".idea",
        ".vscode",
        ".claude",
        ".workbench",
    }
)


def real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def relative(folder: Path, root: Path) -> PurePosixPath | None:
    """``folder`` relative to ``root`` (both real paths), or None when it is not inside."""
    try:
        return PurePosixPath(folder.relative_to(root).as_posix())
    except ValueError:
        return None


def excluded(rel: PurePosixPath, patterns: list[str]) -> bool:
    """``rel`` or one of its parents matches one of the user's globs."""
    prefixes = [PurePosixPath(*rel.parts[: n + 1]).as_posix() for n in range(len(rel.parts))]
    return any(fnmatchcase(p, pattern.strip("/")) for p in prefixes for pattern in patterns)


def refusal(folder: Path, root: Path, patterns: list[str]) -> str | None:
    """Why ``folder`` (a real path) gets no memory file, or None when it may."""
    rel = relative(folder, root)
    if rel is None:
        return "outside the project"
    if not rel.parts:
        return "the project root (its file is the user's)"
    denied = [part for part in rel.parts if part in DENIED]
    if denied:
        return f"inside {denied[0]}/"
    if excluded(rel, patterns):
        return "excluded by folder_memory_exclude"
    return None


def in_checkout(folder: Path | None, checkout: Path | None, root: Path) -> Path | None:
    """``folder``, seen from the checkout at ``root``: one project can have several checkouts
    (linked worktrees), and a folder touched in one is the same folder in another. A folder
    of another checkout maps to ``root`` + its path there, when that folder exists here."""
    if folder is None or checkout is None or checkout == root:
        return folder
    if relative(folder, root) is not None:
        return folder
    rel = relative(folder, checkout)
    if rel is None or not rel.parts:
        return folder
    here = real(root.joinpath(*rel.parts))  # a symlink in it may lead out: checked as real
    return here if here.is_dir() and relative(here, root) is not None else folder


def file_refusal(path: Path) -> str | None:
    """Why the memory file at ``path`` must not be written through, or None."""
    if path.is_symlink():
        return "the file is a symlink"
    if path.exists() and not path.is_file():
        return "not a regular file"
    return None


def folder_of(stored: str, base: Path) -> Path | None:
    """The real folder of a stored file path (relative ones against ``base``), or None."""
    if not stored or "\x00" in stored:
        return None
    path = Path(stored) if os.path.isabs(stored) else base / stored
    try:
        folder = real(path.parent)
    except (OSError, ValueError):
        return None
    return folder if folder.is_dir() else None
