"""The source files under a folder: skipped folders, ``.gitignore`` rules, bounded.

As claude-mem's ``walkDir``: hidden entries and ``IGNORE_DIRS`` (``node_modules``, ``.git``,
``vendor``, build output, virtualenvs…) are skipped, only files of a known code extension
are listed, and depth is capped at 20. Added: each folder's ``.gitignore`` is applied to
what lies under it (plain, ``*``/``?``/``[]``, ``**``, anchored ``/x`` and ``a/b``, folder-only
``x/`` and negated ``!x`` patterns, the last match winning as in git), symlinked folders are
not followed (they can loop or leave the project), symlinked files only when they resolve
inside the root, and the walk stops after ``MAX_FILES`` files, saying so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from workbench.code.languages import EXTENSIONS

IGNORE_DIRS = frozenset(
    {
        "node_modules",
        ".git",
        "dist",
        "build",
        ".next",
        "__pycache__",
        ".venv",
        "venv",
        "env",
        ".env",
        "target",
        "vendor",
        ".cache",
        ".turbo",
        "coverage",
        ".nyc_output",
        ".claude",
        ".smart-file-read",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
MAX_DEPTH = 20
MAX_FILES = 20_000
MAX_GITIGNORE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Rule:
    """One ``.gitignore`` line, as a regex over paths relative to that file's folder."""

    pattern: re.Pattern[str]
    negated: bool
    folders_only: bool


@dataclass
class Walk:
    """What a walk found and where it stopped."""

    files: list[Path] = field(default_factory=list)
    truncated: bool = False


def _glob_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = glob.find("]", i + 1)
            if close == -1:
                out.append(re.escape(char))
            else:
                body = glob[i + 1 : close].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]" if body else re.escape("[]"))
                i = close
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def parse_gitignore(text: str) -> list[Rule]:
    """The rules of one ``.gitignore`` (lines that cannot be read as patterns are skipped)."""
    rules = []
    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        line = line.rstrip(" ")
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        folders_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        regex = _glob_regex(line)
        full = f"^{regex}(?:/.*)?$" if anchored else f"^(?:.*/)?{regex}(?:/.*)?$"
        try:
            rules.append(Rule(re.compile(full, re.DOTALL), negated, folders_only))
        except re.error:
            continue
    return rules


def ignored(rules: list[tuple[str, Rule]], relative: str, is_dir: bool) -> bool:
    """Whether ``relative`` (to the root) is ignored by ``rules`` (each with its folder)."""
    verdict = False
    for folder, rule in rules:
        if folder and not relative.startswith(folder + "/"):
            continue
        local = relative[len(folder) + 1 :] if folder else relative
        if rule.folders_only and not is_dir:
            continue  # what lies under an ignored folder is never reached: the walk prunes it
        if rule.pattern.match(local):
            verdict = not rule.negated
    return verdict


def _read_gitignore(folder: Path) -> list[Rule]:
    path = folder / ".gitignore"
    try:
        if not path.is_file() or path.stat().st_size > MAX_GITIGNORE_BYTES:
            return []
        return parse_gitignore(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return []


def _rules_of(root: Path, folder: Path) -> list[tuple[str, Rule]]:
    prefix = "" if folder == root else folder.relative_to(root).as_posix()
    return [(prefix, rule) for rule in _read_gitignore(folder)]


def source_files(root: Path, start: Path, file_pattern: str | None = None) -> Walk:
    """Code files under ``start`` (inside ``root``), in a stable order, ``.gitignore`` applied."""
    walk = Walk()
    # The .gitignore files from the root down to the start folder apply too.
    relative_start = start.relative_to(root)
    chain = [root / p for p in reversed(relative_start.parents) if p != Path(".")]
    if start != root:
        chain.append(start)
    rules: list[tuple[str, Rule]] = list(_rules_of(root, root))
    for folder in chain[:MAX_DEPTH]:
        rules += _rules_of(root, folder)
    pattern = file_pattern.lower() if file_pattern else None
    stack: list[tuple[Path, int, list[tuple[str, Rule]]]] = [(start, 0, rules)]
    while stack:
        folder, depth, inherited = stack.pop()
        if depth > 0:
            inherited = inherited + _rules_of(root, folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for entry in entries:
            if entry.name.startswith(".") or entry.name in IGNORE_DIRS:
                continue
            path = Path(entry.path)
            relative = path.relative_to(root).as_posix()
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=True)
                is_link = entry.is_symlink()
            except OSError:
                continue
            if ignored(inherited, relative, is_dir):
                continue
            if is_dir:
                if depth + 1 < MAX_DEPTH:
                    folders.append((path, depth + 1, inherited))
                continue
            if not is_file or os.path.splitext(entry.name)[1].lower() not in EXTENSIONS:
                continue
            if is_link and not _resolves_inside(path, root):
                continue
            if pattern and pattern not in relative.lower():
                continue
            walk.files.append(path)
            if len(walk.files) >= MAX_FILES:
                walk.truncated = True
                return walk
        stack.extend(reversed(folders))
    return walk


def _resolves_inside(path: Path, root: Path) -> bool:
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return False
    return root == real or root in real.parents
