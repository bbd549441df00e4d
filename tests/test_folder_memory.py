"""Folder memory files (issue 22 item 3): a recent-activity section per touched folder.

A real git project in tmp_path, a real service storing what real-shaped hook bodies say (Read
and Edit calls on files in several folders, then a summary), and the real CLI:

- ``folder-memory generate --dry-run`` lists what would change and writes nothing;
- ``generate`` writes the section between the markers into ``<folder>/CLAUDE.md`` of each
  touched folder, keeps the user's own text in an existing file byte for byte, and leaves out
  the root, ``.git``, ``node_modules``, a symlink leading out of the project, a folder the user
  excluded, a memory file that is a symlink, and one whose markers were edited by hand;
- a second run changes nothing; ``clean`` gives every file back as it was (deleting the ones
  that held only our section);
- with ``folder_memory_files`` on, the service writes the files itself after a summary (and
  does not with the setting off, the default);
- a title made of hostile text (a file named with ``<``, ``|``, backticks) is neutralised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, base_env, run_workbench
from workbench.folder_memory import section
from workbench.locate import project_identity

USER_TEXT = "# src\n\nConventions for this folder: keep functions small.\n"
EVIL = "a|b`<c>.py"


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    for folder in ("src/util", "docs", "node_modules/lib", "excluded", "linkedfile"):
        (project / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    (project / "escape").symlink_to(outside)
    for name in (
        "README.md",
        "src/app.py",
        f"src/{EVIL}",
        "src/util/helpers.py",
        "docs/guide.md",
        "node_modules/lib/index.js",
        "excluded/thing.py",
        "linkedfile/mod.py",
    ):
        (project / name).write_text(f"# {name}\n")
    (project / "src" / "CLAUDE.md").write_text(USER_TEXT)
    (tmp_path / "elsewhere.md").write_text("not ours\n")
    (project / "linkedfile" / "CLAUDE.md").symlink_to(tmp_path / "elsewhere.md")
    return project


def tool_call(project: Path, n: int, tool: str, rel: str) -> dict[str, Any]:
    path = str(project / rel)
    if tool == "Read":
        tool_input: dict[str, Any] = {"file_path": path}
        response: dict[str, Any] = {
            "type": "text",
            "file": {"filePath": path, "content": f"# {rel}\nline\n"},
        }
    else:
        tool_input = {"file_path": path, "old_string": "line", "new_string": "line 2"}
        response = {"filePath": path, "oldString": "line", "newString": "line 2"}
    return {
        "contentSessionId": "fm-1",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": response,
        "cwd": str(project),
        "tool_use_id": f"toolu_{n}",
    }


def record_session(svc: Service, project: Path, *, session: str = "fm-1") -> None:
    identity = project_identity(str(project))
    status, body = svc.post(
        "/api/sessions/init",
        {
            "contentSessionId": session,
            "project": identity.name,
            "projectKey": identity.key,
            "prompt": "tidy the helpers",
            "platformSource": "claude-code",
        },
    )
    assert status == 200, body
    calls = [
        ("Read", "README.md"),
        ("Read", "src/app.py"),
        ("Edit", "src/app.py"),
        ("Read", f"src/{EVIL}"),
        ("Edit", "src/util/helpers.py"),
        ("Read", "docs/guide.md"),
        ("Read", "node_modules/lib/index.js"),
        ("Read", "excluded/thing.py"),
        ("Read", "escape/secret.py"),
        ("Read", "linkedfile/mod.py"),
        ("Read", ".git/config"),
    ]
    for n, (tool, rel) in enumerate(calls):
        call = {**tool_call(project, n, tool, rel), "contentSessionId": session}
        status, body = svc.post("/api/sessions/observations", call)
        assert status in (200, 202), body
    status, body = svc.post(
        "/api/sessions/summarize",
        {"contentSessionId": session, "last_assistant_message": "Tidied the helpers."},
    )
    assert status in (200, 202), body
    svc.wait_idle(timeout=60)


def folder_files(project: Path) -> dict[str, bytes]:
    """Every CLAUDE.md under the project (symlinks not followed) -> its bytes."""
    found = {}
    for folder, _, files in os.walk(project):
        if "CLAUDE.md" in files:
            path = Path(folder) / "CLAUDE.md"
            if not path.is_symlink():
                found[path.relative_to(project).as_posix()] = path.read_bytes()
    return found


def cli(env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    proc = run_workbench(env, "folder-memory", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    rows: list[dict[str, Any]] = json.loads(proc.stdout)
    return rows


@pytest.fixture
def recorded(tmp_path: Path, make_service: Any) -> tuple[Path, dict[str, str]]:
    project = make_project(tmp_path)
    svc = make_service(WORKBENCH_FOLDER_MEMORY_EXCLUDE="excluded")
    record_session(svc, project)
    svc.stop()
    return project, {**svc.env}


def test_generate_writes_each_touched_folder_and_clean_restores_every_byte(
    recorded: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, env = recorded
    root = ["--root", str(project)]
    before = folder_files(project)
    assert before == {"src/CLAUDE.md": USER_TEXT.encode()}  # the service wrote nothing (off)

    planned = {r["folder"]: r for r in cli(env, "generate", *root, "--dry-run")}
    assert folder_files(project) == before  # a dry run writes nothing
    assert planned["src"]["action"] == "update"
    assert planned["src/util"]["action"] == "create"
    assert planned["docs"]["action"] == "create"
    assert planned["excluded"]["action"] == "skip"
    assert "folder_memory_exclude" in planned["excluded"]["reason"]
    assert planned["linkedfile"]["reason"] == "the file is a symlink"
    assert "node_modules" in planned["node_modules/lib"]["reason"]
    # The root (the user's own file), .git, and where a symlink leads: shown, never written.
    assert planned["."]["action"] == "skip"
    assert "project root" in planned["."]["reason"]
    assert planned[".git"]["action"] == "skip"
    outside = planned[str(tmp_path / "outside")]
    assert outside["action"] == "skip"
    assert outside["reason"] == "outside the project"
    writes = {f for f, r in planned.items() if r["action"] != "skip"}
    assert writes == {"src", "src/util", "docs"}

    done = {r["folder"]: r["action"] for r in cli(env, "generate", *root)}
    assert done["src"] == "update"
    files = folder_files(project)
    assert set(files) == {"src/CLAUDE.md", "src/util/CLAUDE.md", "docs/CLAUDE.md"}
    src = files["src/CLAUDE.md"].decode()
    assert src.startswith(USER_TEXT)  # the user's text, untouched, first
    block = src[len(USER_TEXT) :]
    assert block.count(section.START) == 1
    assert block.count(section.END) == 1
    assert "# Recent Activity" in block
    assert "| ID | Time | T | Title | Read |" in block
    assert "app.py" in block
    # The hostile file name: no raw tag, no extra column, no backtick.
    assert "a\\|b" in block
    assert "&lt;c&gt;" in block
    assert "<c>" not in block
    assert (tmp_path / "elsewhere.md").read_text() == "not ours\n"  # through no symlink
    assert not (tmp_path / "outside" / "CLAUDE.md").exists()
    assert not (project / "CLAUDE.md").exists()

    again = {r["folder"]: r["action"] for r in cli(env, "generate", *root)}
    assert {again[f] for f in ("src", "src/util", "docs")} == {"unchanged"}
    assert folder_files(project) == files

    dry = cli(env, "clean", *root, "--dry-run")
    assert {r["action"] for r in dry} == {"strip", "delete"}
    assert folder_files(project) == files
    cleaned = {r["folder"]: r["action"] for r in cli(env, "clean", *root)}
    assert cleaned == {"src": "strip", "src/util": "delete", "docs": "delete"}
    assert folder_files(project) == before


def test_a_crlf_memory_file_keeps_its_line_endings_through_generate_and_clean(
    recorded: tuple[Path, dict[str, str]],
) -> None:
    """A CLAUDE.md written on Windows (CRLF): generate adds our section in CRLF too and leaves
    the user's lines as they were, a second run sees nothing to change, and clean gives the
    bytes back. (The plan reads with universal newlines, so the file came back all LF.)"""
    project, env = recorded
    root = ["--root", str(project)]
    mine = project / "src" / "CLAUDE.md"
    before = USER_TEXT.replace("\n", "\r\n").encode()
    mine.write_bytes(before)
    done = {r["folder"]: r["action"] for r in cli(env, "generate", *root)}
    assert done["src"] == "update"
    written = mine.read_bytes()
    assert written.startswith(before)
    assert section.START.encode() in written
    assert written.count(b"\n") == written.count(b"\r\n"), "a bare LF in a CRLF file"
    again = {r["folder"]: r["action"] for r in cli(env, "generate", *root)}
    assert again["src"] == "unchanged"
    assert mine.read_bytes() == written
    cleaned = {r["folder"]: r["action"] for r in cli(env, "clean", *root)}
    assert cleaned["src"] == "strip"
    assert mine.read_bytes() == before


@pytest.mark.slow
def test_markers_edited_by_hand_are_left_alone(recorded: tuple[Path, dict[str, str]]) -> None:
    project, env = recorded
    broken = USER_TEXT + f"\n{section.START}\nmy notes, no end marker\n"
    (project / "src" / "CLAUDE.md").write_text(broken)
    rows = {r["folder"]: r for r in cli(env, "generate", "--root", str(project))}
    assert rows["src"]["action"] == "skip"
    assert "markers edited by hand" in rows["src"]["reason"]
    assert (project / "src" / "CLAUDE.md").read_text() == broken
    assert {r["action"] for r in cli(env, "clean", "--root", str(project))} >= {"skip"}
    assert (project / "src" / "CLAUDE.md").read_text() == broken


@pytest.mark.slow
def test_agents_md_is_the_target_when_configured(
    recorded: tuple[Path, dict[str, str]],
) -> None:
    project, env = recorded
    env = {**env, "WORKBENCH_FOLDER_MEMORY_FILENAME": "AGENTS.md"}
    cli(env, "generate", "--root", str(project))
    assert section.START in (project / "src" / "util" / "AGENTS.md").read_text()
    assert (project / "src" / "CLAUDE.md").read_text() == USER_TEXT
    cli(env, "clean", "--root", str(project))
    assert not (project / "src" / "util" / "AGENTS.md").exists()


def test_a_bad_filename_setting_is_refused_with_the_choices(
    recorded: tuple[Path, dict[str, str]],
) -> None:
    project, env = recorded
    env = {**env, "WORKBENCH_FOLDER_MEMORY_FILENAME": "../../etc/passwd"}
    proc = run_workbench(env, "folder-memory", "generate", "--root", str(project))
    assert proc.returncode != 0
    assert "CLAUDE.md" in proc.stderr + proc.stdout


@pytest.mark.parametrize("on", [True, False])
def test_the_service_writes_the_files_after_a_summary_only_when_on(
    on: bool, tmp_path: Path, data_dir: Path
) -> None:
    project = make_project(tmp_path)
    extra = {"WORKBENCH_FOLDER_MEMORY_FILES": "1"} if on else {}
    from tests.conftest import free_port

    port = free_port()
    svc = Service(data_dir=data_dir, port=port, env=base_env(data_dir, port, **extra)).start()
    try:
        record_session(svc, project)
        target = project / "src" / "util" / "CLAUDE.md"
        deadline = time.monotonic() + 30
        while on and not target.exists() and time.monotonic() < deadline:
            time.sleep(0.1)  # the runner's thread writes after the worker stored the summary
    finally:
        svc.stop()
    if on:
        assert section.START in target.read_text()
        assert (project / "src" / "CLAUDE.md").read_text().startswith(USER_TEXT)
    else:
        assert folder_files(project) == {"src/CLAUDE.md": USER_TEXT.encode()}


@pytest.mark.slow
def test_memory_files_that_are_not_text_files_are_never_read_or_written(
    recorded: tuple[Path, dict[str, str]],
) -> None:
    """A FIFO (reading it would block), a folder and a non-UTF-8 file named CLAUDE.md."""
    project, env = recorded
    os.mkfifo(project / "docs" / "CLAUDE.md")
    (project / "src" / "util" / "CLAUDE.md").mkdir()
    latin = "# notes, caf\xe9\n".encode("latin-1")
    (project / "src" / "CLAUDE.md").write_bytes(latin)
    rows = {r["folder"]: r for r in cli(env, "generate", "--root", str(project))}
    assert rows["docs"]["reason"] == "not a regular file"
    assert rows["src/util"]["reason"] == "not a regular file"
    assert rows["src"]["reason"] == "cannot be read as UTF-8 text"
    assert {rows[f]["action"] for f in ("docs", "src", "src/util")} == {"skip"}
    assert (project / "src" / "CLAUDE.md").read_bytes() == latin
    assert cli(env, "clean", "--root", str(project)) == []


def make_worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A main checkout with one commit and a linked worktree of it (``git worktree add``)."""
    main = tmp_path / "main"
    (main / "src").mkdir(parents=True)
    (main / "src" / "app.py").write_text("x = 1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    subprocess.run([*git, "-C", str(main), "add", "."], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-qm", "one"], check=True)
    tree = tmp_path / "tree"
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(tree)], check=True)
    return main, tree


def record_in(svc: Service, checkout: Path, session: str) -> None:
    identity = project_identity(str(checkout))
    status, body = svc.post(
        "/api/sessions/init",
        {"contentSessionId": session, "project": identity.name, "projectKey": identity.key,
         "prompt": "work in the tree", "platformSource": "claude-code"},
    )  # fmt: skip
    assert status == 200, body
    call = {**tool_call(checkout, 0, "Edit", "src/app.py"), "contentSessionId": session}
    assert svc.post("/api/sessions/observations", call)[0] in (200, 202)
    summary = {"contentSessionId": session, "last_assistant_message": "Edited the app."}
    assert svc.post("/api/sessions/summarize", summary)[0] in (200, 202)
    svc.wait_idle(timeout=60)


def test_a_session_in_a_worktree_gets_its_files_in_that_worktree(
    tmp_path: Path, data_dir: Path
) -> None:
    """Noticed at the last stop: a worktree's folders counted as outside the project (its
    key is the main checkout), so the service wrote nothing for a session in a worktree."""
    main, tree = make_worktree(tmp_path)
    from tests.conftest import free_port

    port = free_port()
    env = base_env(data_dir, port, WORKBENCH_FOLDER_MEMORY_FILES="1")
    svc = Service(data_dir=data_dir, port=port, env=env).start()
    try:
        record_in(svc, tree, "fm-tree")
        target = tree / "src" / "CLAUDE.md"
        deadline = time.monotonic() + 30
        while not target.exists() and time.monotonic() < deadline:
            time.sleep(0.1)  # the runner's thread writes after the worker stored the summary
    finally:
        svc.stop()
    assert section.START in target.read_text()
    assert not (main / "src" / "CLAUDE.md").exists()


def test_generate_run_in_a_worktree_writes_there_with_the_whole_projects_activity(
    tmp_path: Path, make_service: Any
) -> None:
    """The CLI's default root is the cwd's checkout; activity in the main checkout's folders
    shows in the same folders of the worktree (one project, two checkouts)."""
    main, tree = make_worktree(tmp_path)
    svc = make_service()
    record_in(svc, main, "fm-main")
    svc.stop()
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "folder-memory", "generate", "--json"],
        env=svc.env, cwd=tree, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert section.START in (tree / "src" / "CLAUDE.md").read_text()
    assert not (main / "src" / "CLAUDE.md").exists()
