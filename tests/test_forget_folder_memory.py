"""Forget rewrites the folder memory files that list the forgotten memory.

With ``folder_memory_files`` on, the service writes a "recent activity" section into a
``CLAUDE.md`` of each folder a session touched, listing the observations (id and title) about
that folder's files. Claude Code reads those files into every session's context. A forget left
the forgotten observation's row there until the project's next summary: its title in the
user's checkout, fed back to the agent. Real parts: a real service with folder memory on, a
real git checkout, ``workbench forget`` as a subprocess.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.test_folder_memory import USER_TEXT, make_project, record_session
from workbench.folder_memory import section

pytestmark = pytest.mark.slow


def listed(svc: Any, folder_file: Path) -> dict[int, str]:
    """The observations (id -> title) the folder's memory file lists."""
    text = folder_file.read_text(encoding="utf-8") if folder_file.exists() else ""
    rows = [line for line in text.splitlines() if "| #" in line]
    ids = [int(line.split("#", 1)[1].split(" ", 1)[0]) for line in rows]
    conn = sqlite3.connect(f"file:{svc.data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return {
            i: str(conn.execute("SELECT title FROM observations WHERE id = ?", (i,)).fetchone()[0])
            for i in ids
        }
    finally:
        conn.close()


def test_forget_rewrites_the_folder_memory_file_listing_the_memory(
    make_service: Any, tmp_path: Path
) -> None:
    project = make_project(tmp_path)
    svc = make_service(WORKBENCH_FOLDER_MEMORY_FILES="1")
    record_session(svc, project)
    target = project / "src" / "util" / "CLAUDE.md"
    deadline = time.monotonic() + 30
    while not target.exists():  # the runner's thread writes after the worker stored the summary
        assert time.monotonic() < deadline, "the service never wrote the folder memory file"
        time.sleep(0.1)
    shown = listed(svc, target)
    assert shown, target.read_text(encoding="utf-8")
    other = project / "src" / "CLAUDE.md"
    kept_elsewhere = listed(svc, other)
    assert len(set(kept_elsewhere) - set(shown)) >= 2, other.read_text(encoding="utf-8")
    # All of src/util's rows, and one of src's: that file keeps its other rows, re-rendered.
    forgotten = sorted({*shown, min(set(kept_elsewhere) - set(shown))})

    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "forget", *map(str, forgotten), "--json"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=svc.env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["forgotten"] == forgotten

    # Nothing of them is left in any folder's file; the folder that listed only them has no
    # section any more (the file held nothing else, so it is gone).
    for path in project.rglob("CLAUDE.md"):
        if path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8")
        for observation_id in forgotten:
            assert f"| #{observation_id} |" not in text, (path, text)
    assert not target.exists() or section.START not in target.read_text(encoding="utf-8")
    survivors = {i: t for i, t in kept_elsewhere.items() if i not in forgotten}
    assert survivors
    assert set(listed(svc, other)) == set(survivors)  # the others' rows stay
    assert other.read_text(encoding="utf-8").startswith(USER_TEXT)  # and the user's own text
    cleaned = {c["place"]: c["items"] for c in report["copies"]["cleaned"]}
    assert str(target) in cleaned["folder memory files"]


def test_forget_cleans_the_files_even_once_folder_memory_is_off(
    make_service: Any, tmp_path: Path
) -> None:
    """Files written while the setting was on list the memory too; the forget takes it out
    whether or not the service writes new ones now."""
    project = make_project(tmp_path)
    svc = make_service(WORKBENCH_FOLDER_MEMORY_FILES="1")
    record_session(svc, project)
    target = project / "src" / "util" / "CLAUDE.md"
    deadline = time.monotonic() + 30
    while not target.exists():
        assert time.monotonic() < deadline, "the service never wrote the folder memory file"
        time.sleep(0.1)
    forgotten = sorted(listed(svc, target))
    svc.stop()
    off = make_service()  # the same data dir, folder memory off
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "forget", *map(str, forgotten), "--json"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=off.env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not target.exists()
    report = json.loads(proc.stdout)
    assert (
        str(target)
        in {c["place"]: c["items"] for c in report["copies"]["cleaned"]}["folder memory files"]
    )
