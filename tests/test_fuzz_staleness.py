"""Fuzzing the staleness inputs (issue 22, item 5): cited paths and cwds of every shape.

What an observation cites comes from a compressor (or a model) and the hook's ``cwd``: any
text. Capture (the service's worker) and the check (every search, the SessionStart hook's cold
path) must never raise on it, never follow it outside what it names, and give a verdict that
agrees with the files: paths with NUL bytes, lone surrogates, ``..``, very long names,
directories, FIFOs, symlinks, a repository with no commit, one whose ``.git`` is garbage or a
dangling worktree file, one deleted after capture, a cwd that is not a repository.

Real files and a real ``git`` binary in a temporary folder; no mocks.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from tests.fuzz_strategies import texts
from tests.test_staleness import GIT_ENV
from workbench.staleness import capture, check, gitrepo
from workbench.store import schema
from workbench.store.connection import atomic, connect

pytestmark = pytest.mark.slow

NAMES = st.one_of(
    texts,
    st.sampled_from(
        [
            "a.py",
            "dir",
            "fifo",
            "link",
            "dangling",
            "../outside.py",
            "./a.py",
            "a.py/",
            "a\0b",
            "x" * 5000,
            "we ird\n'\"ü.py",
            "/etc/hostname",
            "/nonexistent/deep/file.py",
            "~/a.py",
            "\ud83d.py",
        ]
    ),
)


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, check=True)


@pytest.fixture(scope="module")
def places() -> Iterator[dict[str, Path]]:
    """Folders of every kind a cwd can be, each with the same odd entries."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        made: dict[str, Path] = {}
        for kind in ("repo", "no-commit", "plain", "bad-dotgit", "dangling-worktree"):
            where = root / kind
            where.mkdir()
            (where / "a.py").write_text("a\n")
            (where / "dir").mkdir()
            os.mkfifo(where / "fifo")
            (where / "link").symlink_to(where / "a.py")
            (where / "dangling").symlink_to(where / "gone")
            made[kind] = where
        _git(made["repo"], "init", "-q")
        _git(made["repo"], "add", "a.py")
        _git(made["repo"], "commit", "-q", "-m", "one")
        _git(made["no-commit"], "init", "-q")
        (made["bad-dotgit"] / ".git").write_bytes(b"\xff\xfe not a gitdir line")
        (made["dangling-worktree"] / ".git").write_text("gitdir: /nonexistent/worktrees/w\n")
        (root / "outside.py").write_text("o\n")
        yield made


def _store(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    schema.apply(conn, str(path))
    return conn


@settings(
    max_examples=budget(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    kind=st.sampled_from(["repo", "no-commit", "plain", "bad-dotgit", "dangling-worktree"]),
    names=st.lists(NAMES, max_size=6),
    cwd_kind=st.sampled_from(["place", "relative", "empty", "hostile"]),
    hostile_cwd=texts,
)
def test_capture_and_check_never_raise_and_agree_with_the_files(
    places: dict[str, Path],
    tmp_path: Path,
    kind: str,
    names: list[str],
    cwd_kind: str,
    hostile_cwd: str,
) -> None:
    place = places[kind]
    cwd = {
        "place": str(place),
        "relative": "some/relative/dir",
        "empty": "",
        "hostile": hostile_cwd,
    }[cwd_kind]
    found = capture.capture(names, cwd)
    assert len(found) <= capture.MAX_FILES
    for item in found:
        assert os.path.isabs(item.abs_path)
        assert "\0" not in item.abs_path
        if item.git_commit is not None:
            assert kind == "repo"
            assert item.repo_root == str(place)
    db = tmp_path / f"fuzz-{os.getpid()}-{len(list(tmp_path.iterdir()))}.db"
    conn = _store(db)
    try:
        with atomic(conn):
            conn.execute(
                "INSERT INTO observations (project, type, title, created_at, created_at_epoch,"
                " content_hash) VALUES ('p', 'discovery', 't', '2026-01-01', 0, 'h')"
            )
            capture.record(conn, 1, found)
        verdict = check.check(conn, [1])
        # Nothing changed between capture and check: nothing is stale.
        assert not any(v.stale for v in verdict.values()), verdict
    finally:
        conn.close()


def test_a_repository_deleted_after_capture_is_stale_not_an_error(tmp_path: Path) -> None:
    repo = tmp_path / "gone"
    repo.mkdir()
    (repo / "f.py").write_text("f\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "f.py")
    _git(repo, "commit", "-q", "-m", "f")
    (item,) = capture.capture(["f.py"], str(repo))
    assert item.git_commit is not None
    shutil.rmtree(repo)
    assert check.file_changed(item.abs_path, item.blob, item.size, item.mtime_ns)
    assert gitrepo.commits_since(str(repo), item.git_commit, "f.py") == []
    assert gitrepo.diff_since(str(repo), item.git_commit, "f.py") == ""


@settings(max_examples=budget(100), deadline=None)
@given(directory=texts)
def test_repo_lookup_of_any_text_never_raises(directory: str) -> None:
    found = gitrepo.repo_of(directory)
    if found is not None:
        assert os.path.isabs(found.root)


@settings(
    max_examples=budget(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    abs_path=st.one_of(NAMES, st.sampled_from(["/", "/dev/null", "/proc/self/mem"])),
    blob=st.one_of(st.none(), texts, st.sampled_from(["e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"])),
    size=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    mtime_ns=st.integers(min_value=-(2**63), max_value=2**63 - 1),
)
def test_any_evidence_row_is_checked_without_raising(
    places: dict[str, Path], abs_path: str, blob: str | None, size: int, mtime_ns: int
) -> None:
    """Rows the worker never writes (an older version's, a hand-edited store) and special
    files (a FIFO would block a read; ``/proc`` files lie about their size): a verdict, no
    exception, no hang. The SessionStart hook reads these rows on its cold path."""
    where = str(places["plain"] / abs_path) if not abs_path.startswith("/") else abs_path
    try:
        where.encode("utf-8")
    except UnicodeEncodeError:
        return  # SQLite text is UTF-8: such a row cannot exist
    assert isinstance(check.file_changed(where, blob, size, mtime_ns), bool)


@settings(max_examples=budget(100), deadline=None)
@given(
    value=st.one_of(
        st.booleans(),
        st.integers(-3, 3),
        st.none(),
        texts,
        st.sampled_from(["true", "False", "1", "0", "yes", "off", " on ", "TRUE", "2"]),
    )
)
def test_the_cold_hook_reads_context_skip_stale_as_the_service_does(value: object) -> None:
    """``context_skip_stale`` in settings.json, whatever it holds: the SessionStart hook's
    cold block skips stale rows exactly when the service would (an invalid value: the
    service refuses the file, and the hook keeps the default, marking instead of skipping)."""
    import json

    from pydantic import ValidationError

    from workbench.errors import WorkbenchError
    from workbench.recall import cold_context
    from workbench.settings import load_settings

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        try:
            text = json.dumps({"context_skip_stale": value})
        except ValueError:
            return
        (root / "settings.json").write_text(text, encoding="utf-8")
        hook = cold_context.limits(root).skip_stale
        try:
            served: bool | None = load_settings(root).context_skip_stale
        except (ValidationError, WorkbenchError, ValueError):
            served = None
        assert hook is (served if served is not None else False)
