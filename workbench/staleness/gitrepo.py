"""The git repository of a path, its HEAD, and what changed since a recorded commit.

Finding the repository reads the file system only (walk up to ``.git``, a directory or a
worktree's ``gitdir:`` file). HEAD is asked of git once per repository and then only when
the HEAD signature changes (the stat of ``HEAD``, its reflog and the branch ref), so the
worker pays one ``stat`` per observation, not a process. Every git call has a timeout, a
clean environment (no prompt, no optional locks, no pager, no external diff or textconv),
and touches no remote; any failure (no git binary, not a repository, no commit yet, a
deleted repository, a timeout) is ``None``, never an exception.
"""

from __future__ import annotations

import os
import subprocess
from collections import OrderedDict
from dataclasses import dataclass

from workbench import locate

GIT_TIMEOUT_S = 5.0
DIFF_MAX_CHARS = 20_000
_CACHE_SIZE = 2_000
_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")


@dataclass(frozen=True)
class Repo:
    """A work tree and its git directory (a worktree's own, and the shared common one)."""

    root: str
    git_dir: str
    common_dir: str


_repo_of_dir: OrderedDict[str, Repo | None] = OrderedDict()
_head_of_repo: dict[str, tuple[tuple[tuple[int, int], ...], str | None]] = {}


def _remember(cache: OrderedDict[str, Repo | None], key: str, value: Repo | None) -> None:
    cache[key] = value
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _git_dir_of(dot_git: str) -> str | None:
    """The git directory a ``.git`` entry names (itself, or a worktree file's ``gitdir:``)."""
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:  # noqa: PTH123
            first = handle.readline(4096).strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = first.removeprefix("gitdir:").strip()
    full = os.path.normpath(os.path.join(os.path.dirname(dot_git), target))
    return full if os.path.isdir(full) else None


def repo_of(directory: str) -> Repo | None:
    """The repository whose work tree holds ``directory`` (absolute), or None."""
    if not directory or not os.path.isabs(directory) or "\0" in directory:
        return None
    start = os.path.normpath(directory)
    if start in _repo_of_dir:
        return _repo_of_dir[start]
    found: Repo | None = None
    # One walk up to ``.git`` for the whole package (``locate``'s: at most MAX_WALK_LEVELS,
    # never raising on a path the file system refuses).
    checkout = locate.checkout_root(start)
    if checkout is not None:
        git_dir = _git_dir_of(os.path.join(checkout, ".git"))
        if git_dir is not None:
            common = git_dir
            try:
                with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:  # noqa: PTH123
                    common = os.path.normpath(os.path.join(git_dir, handle.read().strip()))
            except OSError:
                pass
            found = Repo(str(checkout), git_dir, common)
    _remember(_repo_of_dir, start, found)
    return found


def _stat_key(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


def _head_signature(repo: Repo) -> tuple[tuple[int, int], ...]:
    """What changes whenever HEAD may point elsewhere: HEAD, its reflog, the branch ref."""
    parts = [
        _stat_key(os.path.join(repo.git_dir, "HEAD")),
        _stat_key(os.path.join(repo.git_dir, "logs", "HEAD")),
        _stat_key(os.path.join(repo.common_dir, "packed-refs")),
    ]
    try:
        with open(os.path.join(repo.git_dir, "HEAD"), encoding="utf-8") as handle:  # noqa: PTH123
            head = handle.read(4096).strip()
    except OSError:
        head = ""
    if head.startswith("ref:"):
        ref = head.removeprefix("ref:").strip()
        if ref and ".." not in ref:
            parts.append(_stat_key(os.path.join(repo.common_dir, ref)))
    return tuple(parts)


def run_git(root: str, *args: str, timeout: float = GIT_TIMEOUT_S) -> str | None:
    """``git -C root ARGS`` output, or None on any failure (never raises)."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
        GIT_ASKPASS="",
        SSH_ASKPASS="",
        LC_ALL="C",
    )
    command = ["git", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never", "-C", root]
    try:
        done = subprocess.run(
            [*command, *args],
            env=env,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def head(repo: Repo) -> str | None:
    """The commit HEAD names, or None (no commit yet, git missing or failing)."""
    signature = _head_signature(repo)
    cached = _head_of_repo.get(repo.root)
    if cached is not None and cached[0] == signature:
        return cached[1]
    out = run_git(repo.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    commit = out.strip() if out else None
    if commit is not None and not _is_object_id(commit):
        commit = None
    if len(_head_of_repo) > _CACHE_SIZE:
        _head_of_repo.clear()
    _head_of_repo[repo.root] = (signature, commit)
    return commit


def _is_object_id(text: str) -> bool:
    """A full hex object id (SHA-1 or SHA-256 repositories)."""
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def commits_since(root: str, commit: str, path: str, limit: int = 20) -> list[str]:
    """``<short id> <subject>`` of each commit after ``commit`` that touched ``path``."""
    out = run_git(
        root, "log", f"--max-count={limit}", "--format=%h %s", f"{commit}..HEAD", "--", path
    )
    return [line for line in (out or "").splitlines() if line.strip()]


def diff_since(root: str, commit: str, path: str) -> str:
    """The diff of ``path`` from ``commit`` to the working tree (cut to ``DIFF_MAX_CHARS``)."""
    out = run_git(root, "diff", "--no-ext-diff", "--no-textconv", "--no-color", commit, "--", path)
    text = out or ""
    return text if len(text) <= DIFF_MAX_CHARS else text[:DIFF_MAX_CHARS] + "\n… (cut)\n"
