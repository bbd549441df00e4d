"""Concepts: short lowercase tags from a path's extension, name and folders.

Tags are for filtering and search ("testing", "python", "hooks", "config"), so they come from
small fixed tables plus the file's parent folder, never from free text.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from workbench.compress.rules.secrets import is_secret_path

MAX_CONCEPTS = 6

_EXT_TAGS = {
    ".py": "python", ".pyi": "python", ".ipynb": "notebook", ".ts": "typescript",
    ".tsx": "typescript", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
    ".rs": "rust", ".go": "go", ".java": "java", ".kt": "kotlin", ".rb": "ruby",
    ".php": "php", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".swift": "swift", ".sh": "shell", ".bash": "shell", ".zsh": "shell",
    ".sql": "sql", ".md": "docs", ".rst": "docs", ".json": "config", ".toml": "config",
    ".yaml": "config", ".yml": "config", ".ini": "config", ".cfg": "config",
    ".html": "html", ".css": "css", ".scss": "css", ".db": "sqlite", ".sqlite": "sqlite",
    ".sqlite3": "sqlite", ".lock": "dependencies", ".csv": "data", ".parquet": "data",
}  # fmt: skip
_PART_TAGS = {
    "tests": "testing", "test": "testing", "spec": "testing", "__tests__": "testing",
    "hooks": "hooks", "migrations": "database", ".github": "ci", "workflows": "ci",
    "docs": "docs", "cli": "cli", "api": "api", "routes": "api", "auth": "auth",
    "db": "database", "notebooks": "notebook", "bench": "benchmark", "config": "config",
}  # fmt: skip
_NAME_TAGS = {
    "pyproject.toml": "packaging", "setup.py": "packaging", "package.json": "dependencies",
    "requirements.txt": "dependencies", "dockerfile": "docker", "docker-compose.yml": "docker",
    "makefile": "build", "conftest.py": "testing", ".gitignore": "git", "claude.md": "docs",
}  # fmt: skip
_STEM_TAGS = (
    ("test", "testing"), ("sqlite", "sqlite"), ("schema", "database"), ("migrat", "database"),
    ("config", "config"), ("settings", "config"), ("auth", "auth"), ("hook", "hooks"),
)  # fmt: skip
_GENERIC_DIRS = frozenset(
    "src lib app pkg internal main home users user tmp var usr opt . .. ~ work repo".split()
)


def concepts_for(paths: Iterable[str], extra: Iterable[str] = ()) -> list[str]:
    """Short lowercase tags from extensions, well-known names, path parts and given keywords."""
    tags: dict[str, None] = dict.fromkeys(t for t in extra if t)
    for path in paths:
        for tag in _path_tags(path):
            tags.setdefault(tag, None)
        if len(tags) >= MAX_CONCEPTS:
            break
    return list(tags)[:MAX_CONCEPTS]


@lru_cache(maxsize=4096)  # sessions touch the same files over and over
def _path_tags(path: str) -> tuple[str, ...]:
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if not parts:
        return ()
    name = parts[-1].lower()
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    found = []
    if name in _NAME_TAGS:
        found.append(_NAME_TAGS[name])
    if ext and "." + ext in _EXT_TAGS:
        found.append(_EXT_TAGS["." + ext])
    found.extend(tag for key, tag in _STEM_TAGS if key in stem)
    if is_secret_path(path):
        found.append("secrets")
    for part in parts[:-1]:
        lowered = part.lower()
        if lowered in _PART_TAGS:
            found.append(_PART_TAGS[lowered])
    if len(parts) > 1:
        parent = parts[-2].lower()
        plain = parent.replace("_", "").replace("-", "").isalnum() and len(parent) <= 24
        if plain and parent not in _GENERIC_DIRS and parent not in _PART_TAGS:
            found.append(parent)
    return tuple(found)
