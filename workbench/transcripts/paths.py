"""Where agents keep their transcripts, and PATH arguments expanded to transcript files.

Defaults, under the user's HOME (or the agent's own variable when it is set, as the agent
itself reads it): Claude Code ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, then
``projects/**/*.jsonl`` (sub-agents' files included); Codex ``$CODEX_HOME`` or ``~/.codex``,
then ``sessions/**/*.jsonl``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Mapping
from pathlib import Path


def default_globs(env: Mapping[str, str] | None = None) -> list[str]:
    """The two default patterns, absolute."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    claude = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    codex = Path(env.get("CODEX_HOME") or home / ".codex")
    return [str(claude / "projects" / "**" / "*.jsonl"), str(codex / "sessions" / "**" / "*.jsonl")]


def expand(patterns: Iterable[str]) -> list[Path]:
    """Each argument as files: a folder's ``*.jsonl`` at any depth, a glob's matches, or the
    file itself (even when it does not exist, so the report can say it is missing). Sorted,
    each file once, absolute."""
    found: dict[str, Path] = {}
    for pattern in patterns:
        path = Path(os.path.expanduser(pattern))
        if path.is_dir():
            matches = [str(p) for p in path.rglob("*.jsonl")]
        elif glob.has_magic(str(path)):
            matches = glob.glob(str(path), recursive=True)
        else:
            matches = [str(path)]
        for match in matches:
            absolute = Path(os.path.abspath(match))
            if not absolute.is_dir():
                found.setdefault(str(absolute), absolute)
    return [found[k] for k in sorted(found)]
