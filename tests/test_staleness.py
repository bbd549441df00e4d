"""Memory that knows when the code moved on (issue 22, item 5): the service end to end.

A real git repository made in tmp_path with the ``git`` binary, a real service storing what
real-shaped hook bodies say (a Read, an Edit), and then the repository moving on: a commit
that changes a cited file, an uncommitted edit, a revert, a deletion. Each time the hit, the
timeline item and the fetched observation say whether the memory is stale and which cited
files changed. Plus the cases where there is no git at all (a plain folder: file hashes).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service
from workbench.locate import project_identity

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(tmp_path: Path, files: dict[str, str], *, commit: bool = True) -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    if commit:
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "first")
    return repo


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def read_call(cwd: Path, rel: str, n: int, session: str = "st-1") -> dict[str, Any]:
    path = str(cwd / rel)
    text = (cwd / rel).read_text() if (cwd / rel).is_file() else ""
    return {
        "contentSessionId": session,
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_response": {"type": "text", "file": {"filePath": path, "content": text}},
        "cwd": str(cwd),
        "tool_use_id": f"toolu_read_{n}",
    }


def edit_call(
    cwd: Path, rel: str, old: str, new: str, n: int, session: str = "st-1"
) -> dict[str, Any]:
    path = str(cwd / rel)
    return {
        "contentSessionId": session,
        "tool_name": "Edit",
        "tool_input": {"file_path": path, "old_string": old, "new_string": new},
        "tool_response": {"filePath": path, "oldString": old, "newString": new},
        "cwd": str(cwd),
        "tool_use_id": f"toolu_edit_{n}",
    }


def start_session(svc: Service, cwd: Path, session: str = "st-1") -> None:
    identity = project_identity(str(cwd))
    status, body = svc.post(
        "/api/sessions/init",
        {
            "contentSessionId": session,
            "project": identity.name,
            "projectKey": identity.key,
            "prompt": "look at the app",
            "platformSource": "claude-code",
        },
    )
    assert status == 200, body


def record(svc: Service, *calls: dict[str, Any]) -> list[int]:
    """Post the calls, wait for the worker, and return the new observations' ids in order."""
    _, before = svc.get("/api/observations?limit=100")
    known = {o["id"] for o in before["items"]}
    for call in calls:
        status, body = svc.post("/api/sessions/observations", call)
        assert status in (200, 202), body
    svc.wait_idle(timeout=60)
    _, after = svc.get("/api/observations?limit=100")
    return sorted(o["id"] for o in after["items"] if o["id"] not in known)


def stale_and_fresh(tmp_path: Path, svc: Service) -> tuple[Path, int, int]:
    """A repo with two files read (``lib.py``, ``keep.py``), then ``lib.py`` changed and
    committed ("lib now says two"): the first memory is stale, the second fresh."""
    repo = make_repo(tmp_path, {"lib.py": "A = 1\n", "keep.py": "K = 1\n"})
    start_session(svc, repo)
    stale, fresh = record(svc, read_call(repo, "lib.py", 1), read_call(repo, "keep.py", 2))
    (repo / "lib.py").write_text("A = 2\n")
    commit_all(repo, "lib now says two")
    return repo, stale, fresh


def fetched(svc: Service, obs_id: int) -> dict[str, Any]:
    status, found = svc.post("/api/observations/batch", {"ids": [obs_id]})
    assert status == 200, found
    return dict(found[0])


def hit(svc: Service, obs_id: int, project: str) -> dict[str, Any]:
    status, body = svc.get(f"/api/search?project={project}&format=json&limit=100")
    assert status == 200, body
    return next(h for h in body["observations"] if h["id"] == obs_id)


def item(svc: Service, obs_id: int) -> dict[str, Any]:
    status, body = svc.get(f"/api/timeline?anchor={obs_id}&depth_before=0&depth_after=0")
    assert status == 200, body
    return next(i for i in body["items"] if i["id"] == obs_id)


def verdicts(svc: Service, obs_id: int, project: str) -> list[tuple[Any, Any]]:
    """(stale, stale_files) as the batch, the search hit and the timeline item say."""
    return [
        (r["stale"], r["stale_files"])
        for r in (fetched(svc, obs_id), hit(svc, obs_id, project), item(svc, obs_id))
    ]


def test_a_commit_that_changes_a_cited_file_makes_the_observation_stale(
    tmp_path: Path, service: Service
) -> None:
    repo = make_repo(tmp_path, {"src/app.py": "def run():\n    return 1\n", "README.md": "hi\n"})
    project = project_identity(str(repo)).name
    start_session(service, repo)
    (read_app,) = record(service, read_call(repo, "src/app.py", 1))
    assert verdicts(service, read_app, project) == [(False, [])] * 3

    (repo / "README.md").write_text("hello\n")  # not cited: changes nothing
    commit_all(repo, "readme")
    assert verdicts(service, read_app, project) == [(False, [])] * 3

    (repo / "src/app.py").write_text("def run():\n    return 2\n")
    commit_all(repo, "app returns 2")
    assert verdicts(service, read_app, project) == [(True, ["src/app.py"])] * 3
    status, text = service.get(f"/api/search?project={project}&format=text")
    assert status == 200
    line = next(ln for ln in text.splitlines() if ln.startswith(f"#{read_app} "))
    assert "[stale: src/app.py changed since]" in line


def test_an_uncommitted_change_is_stale_and_a_revert_makes_it_fresh_again(
    tmp_path: Path, service: Service
) -> None:
    repo = make_repo(tmp_path, {"lib.py": "A = 1\n"})
    project = project_identity(str(repo)).name
    start_session(service, repo)
    (obs,) = record(service, read_call(repo, "lib.py", 1))
    (repo / "lib.py").write_text("A = 2\n")
    assert verdicts(service, obs, project) == [(True, ["lib.py"])] * 3
    git(repo, "checkout", "--", "lib.py")
    assert verdicts(service, obs, project) == [(False, [])] * 3
    (repo / "lib.py").unlink()
    assert verdicts(service, obs, project) == [(True, ["lib.py"])] * 3


def test_the_edit_that_made_the_memory_is_not_a_later_change(
    tmp_path: Path, service: Service
) -> None:
    """The Edit's own change is in the working tree when it is captured (uncommitted): it is
    what the memory says, so neither it nor committing it as it is makes the memory stale."""
    repo = make_repo(tmp_path, {"app.py": "X = 1\n"})
    project = project_identity(str(repo)).name
    start_session(service, repo)
    (repo / "app.py").write_text("X = 2\n")  # what the Edit tool did before PostToolUse
    (edit,) = record(service, edit_call(repo, "app.py", "X = 1", "X = 2", 1))
    assert verdicts(service, edit, project) == [(False, [])] * 3
    commit_all(repo, "x is 2")
    assert verdicts(service, edit, project) == [(False, [])] * 3
    (repo / "app.py").write_text("X = 3\n")
    commit_all(repo, "x is 3")
    assert verdicts(service, edit, project) == [(True, ["app.py"])] * 3


def test_without_git_file_hashes_decide(tmp_path: Path, service: Service) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\n")
    project = project_identity(str(folder)).name
    start_session(service, folder)
    (obs,) = record(service, read_call(folder, "notes.txt", 1))
    assert verdicts(service, obs, project) == [(False, [])] * 3
    os.utime(folder / "notes.txt", ns=(1, 1))  # touched, same content: not a change
    assert verdicts(service, obs, project) == [(False, [])] * 3
    (folder / "notes.txt").write_text("two\n")
    assert verdicts(service, obs, project) == [(True, ["notes.txt"])] * 3


def test_evidence_records_the_commit_and_blob_ids_git_would_give(
    tmp_path: Path, service: Service
) -> None:
    repo = make_repo(tmp_path, {"src/a.py": "a = 1\n"})
    head = git(repo, "rev-parse", "HEAD").strip()
    start_session(service, repo)
    (obs,) = record(service, read_call(repo, "src/a.py", 1))
    service.stop()
    import sqlite3

    conn = sqlite3.connect(service.data_dir / "workbench.db")
    rows = conn.execute(
        "SELECT path, abs_path, blob, repo_root, git_commit FROM observation_evidence"
        " WHERE observation_id = ?",
        (obs,),
    ).fetchall()
    conn.close()
    blob = git(repo, "hash-object", "src/a.py").strip()
    assert rows == [("src/a.py", str(repo / "src/a.py"), blob, str(repo), head)]


@pytest.mark.parametrize("case", ["no-commit", "not-a-repo", "deleted-repo", "outside", "weird"])
def test_odd_places_never_break_the_worker(tmp_path: Path, service: Service, case: str) -> None:
    """A repo with no commit, a cwd that is no repo, a repo deleted after capture, a path
    outside the cwd, a name with spaces, quotes, newlines and non-UTF-8-looking text: the
    observation is stored, the service answers, and the verdict is what the files say."""
    if case == "no-commit":
        cwd = make_repo(tmp_path, {"a.py": "a\n"}, commit=False)
        rel = "a.py"
    elif case in ("not-a-repo", "deleted-repo"):
        cwd = make_repo(tmp_path, {"a.py": "a\n"}) if case == "deleted-repo" else tmp_path / "x"
        cwd.mkdir(exist_ok=True)
        (cwd / "a.py").write_text("a\n")
        rel = "a.py"
    elif case == "outside":
        cwd = make_repo(tmp_path, {"a.py": "a\n"})
        other = tmp_path / "elsewhere"
        other.mkdir()
        (other / "b.py").write_text("b\n")
        rel = str(other / "b.py")
    else:
        cwd = make_repo(tmp_path, {"we ird\n'\"ü[x].py": "w\n"})
        rel = "we ird\n'\"ü[x].py"
    start_session(service, cwd)
    call = read_call(cwd, rel, 1) if not os.path.isabs(rel) else read_call(Path("/"), rel[1:], 1)
    call["cwd"] = str(cwd)
    (obs,) = record(service, call)
    first = fetched(service, obs)
    assert first["stale"] is False, first
    if case == "deleted-repo":
        import shutil

        shutil.rmtree(cwd)
    else:
        target = Path(rel) if os.path.isabs(rel) else cwd / rel
        target.write_text("changed\n")
    again = fetched(service, obs)
    assert again["stale"] is True
    assert again["stale_files"] == [first["files_read"][0]]
    status, _ = service.get("/api/health")
    assert status == 200
