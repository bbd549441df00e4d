"""The evidence of a new observation: each cited file's content id, and the repo's HEAD.

Runs in the service's worker when an observation is derived (never in a hook), outside the
store's transaction: hashing reads files. A path is resolved as the compressors wrote it
(absolute, or relative to the session's cwd); one that cannot be resolved (relative with no
cwd, a NUL byte, a lone surrogate, too long) records nothing, and a directory records
nothing (a listing is not a claim about content). A file that does not exist records
``blob`` NULL: if it appears later, the observation ("no such file") is stale too.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.staleness import blobs, gitrepo

log = logging.getLogger("workbench.staleness")
MAX_FILES = 64  # a sweep (a Grep listing hundreds of files) keeps its first 64
MAX_PATH_CHARS = 4096


@dataclass(frozen=True)
class Evidence:
    """One cited file as the observation saw it."""

    path: str  # as the observation stores it
    abs_path: str
    blob: str | None
    size: int
    mtime_ns: int
    repo_root: str | None
    git_commit: str | None


def _usable(text: str) -> bool:
    """Not empty, no NUL, not too long, and valid UTF-8 (a lone surrogate cannot be stored)."""
    if not text or "\0" in text or len(text) > MAX_PATH_CHARS:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def resolve(path: str, cwd: str) -> str | None:
    """The absolute path the observation means, or None when it cannot be known."""
    text = path.strip()
    if not _usable(text):
        return None
    if os.path.isabs(text):
        return os.path.normpath(text)
    if _usable(cwd) and os.path.isabs(cwd):
        return os.path.normpath(os.path.join(cwd, text))
    return None


def capture(paths: Iterable[str], cwd: str) -> list[Evidence]:
    """Evidence for each distinct path (at most ``MAX_FILES``); never raises."""
    found: list[Evidence] = []
    for path in list(dict.fromkeys(p for p in paths if isinstance(p, str)))[:MAX_FILES]:
        try:
            item = _one(path, cwd)
        except Exception:  # noqa: BLE001 - a capture must never fail the derive
            log.exception("could not capture the evidence of %r", path[:200])
            continue
        if item is not None:
            found.append(item)
    return found


def _one(path: str, cwd: str) -> Evidence | None:
    full = resolve(path, cwd)
    if full is None or os.path.isdir(full):
        return None
    now = blobs.state(full)
    repo = gitrepo.repo_of(os.path.dirname(full))
    commit = gitrepo.head(repo) if repo is not None else None
    return Evidence(
        path=path,
        abs_path=full,
        blob=now.blob,
        size=now.size,
        mtime_ns=now.mtime_ns,
        repo_root=repo.root if repo is not None else None,
        git_commit=commit,
    )


def record(conn: sqlite3.Connection, observation_id: int, evidence: list[Evidence]) -> None:
    """Store the evidence of one new observation (inside the caller's transaction)."""
    conn.executemany(
        "INSERT OR IGNORE INTO observation_evidence (observation_id, path, abs_path, blob,"
        " size, mtime_ns, repo_root, git_commit) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                observation_id,
                e.path,
                e.abs_path,
                e.blob,
                e.size,
                e.mtime_ns,
                e.repo_root,
                e.git_commit,
            )
            for e in evidence
        ],
    )
