"""Which language a file is, and its tree-sitter grammar from the grammar's own PyPI wheel.

Each grammar is a compiled wheel pinned in ``pyproject.toml`` (``tree-sitter-python``,
``tree-sitter-typescript``…): nothing is downloaded at run time. ``tree-sitter-language-pack``
was not used for that reason: its 1.x wheels carry a download manager and fetch parsers
into a cache on first use, which fails offline.

The extension map is the original's (claude-mem ``smart-file-read/parser.ts``) for the
languages installed here; a file of any other extension has no grammar and gets a
symbol-less outline, as there. Grammars are imported on first use, one per language, so
importing this module costs nothing (the file-history hint asks it whether a file has an
outline).
"""

from __future__ import annotations

import importlib
import posixpath
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyw": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "tsx",  # the original's choice: the TSX grammar reads JSX
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".md": "markdown",
    ".mdx": "markdown",
    ".markdown": "markdown",
}

# language -> (module, function returning the grammar's capsule)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
}

SUPPORTED = tuple(GRAMMARS)


def language_of(path: str) -> str:
    """The language of ``path`` by its extension (case-insensitive), or ``"unknown"``."""
    _, ext = posixpath.splitext(path.replace("\\", "/"))
    return EXTENSIONS.get(ext.lower(), "unknown")


def has_outline(path: str) -> bool:
    """True when ``path`` is of a language with a grammar here (the file-history hint)."""
    return language_of(path) in GRAMMARS


@cache
def grammar(language: str) -> Language | None:
    """The tree-sitter ``Language`` for ``language``; ``None`` when there is none.

    Imported here, once per language: the grammar wheels are C extensions that only a
    code-navigation call needs.
    """
    from tree_sitter import Language

    spec = GRAMMARS.get(language)
    if spec is None:
        return None
    module = importlib.import_module(spec[0])
    return Language(getattr(module, spec[1])())
