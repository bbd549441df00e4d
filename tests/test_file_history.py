"""File history before a Read: candidates, matching, scoring and order, gates, the block.

A real store with fixed timestamps; the block is compared whole against a snapshot
(``tests/snapshots/file_history.txt``, regenerate with UPDATE_SNAPSHOTS=1). The hook side of
the gates (size, directory, missing file, subagent, service down) runs as real subprocesses
in ``tests/test_hooks_recall.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from tests.snapshots import snapshot
from workbench import locate
from workbench.clock import ms_from_iso
from workbench.models import ObservationDraft
from workbench.recall.file_history import candidates, file_context, find, select
from workbench.redact import strip_private
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

T0 = ms_from_iso("2026-11-20T10:00:00Z")
HOUR = 3_600_000
# The key of this test's checkout (set by the ``project`` fixture): relative paths match in
# the cwd's project by key, not by name (issue 19 item 8).
PROJECT_KEYS: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _fresh_keys() -> Iterator[None]:
    PROJECT_KEYS.clear()
    yield
    PROJECT_KEYS.clear()


def add(
    conn: sqlite3.Connection,
    title: str,
    *,
    session: str | None,
    at: int,
    read: list[str] | None = None,
    modified: list[str] | None = None,
    project: str = "proj",
    kind: str = "discovery",
) -> int:
    """One observation; of ``proj``, it is keyed as the checkout's folder (m012)."""
    with atomic(conn):
        obs_id, _ = observations.insert(
            conn,
            ObservationDraft(
                type=kind, title=title, files_read=read or [], files_modified=modified or []
            ),
            content_session_id=session,
            project=project,
            created_ms=at,
            project_key=PROJECT_KEYS.get(project),
        )
    return obs_id


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git checkout named ``proj`` (its name is the project of any cwd inside it)."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    PROJECT_KEYS["proj"] = locate.project_key_from_cwd(str(root))
    return root


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with Store(tmp_path / "workbench.db") as store:
        yield store.conn


# ----- candidates --------------------------------------------------------------------------------


def test_candidates_for_an_absolute_path_inside_cwd(project: Path) -> None:
    cands = candidates(f"{project}/src/./auth.py", str(project))
    assert cands.absolute == (f"{project}/src/./auth.py", f"{project}/src/auth.py")
    assert cands.relative == ("src/./auth.py", "src/auth.py")
    assert cands.project == "proj"
    assert cands.display == "src/./auth.py"


def test_candidates_for_a_relative_path_and_outside_cwd(project: Path) -> None:
    rel = candidates("src/auth.py", str(project))
    assert rel.absolute == (f"{project}/src/auth.py",)
    assert rel.relative == ("src/auth.py",)
    outside = candidates("/etc/hosts", str(project))
    assert (outside.absolute, outside.relative, outside.display) == (
        ("/etc/hosts",),
        (),
        "/etc/hosts",
    )
    bare = candidates("/etc/hosts")
    assert (bare.project, bare.relative) == (None, ())
    assert candidates("   ").all == ()


# ----- matching ----------------------------------------------------------------------------------


def test_matches_absolute_anywhere_and_relative_only_in_the_cwd_project(
    conn: sqlite3.Connection, project: Path
) -> None:
    path = f"{project}/src/auth.py"
    mine = add(conn, "relative, this project", session="s1", at=T0, read=["src/auth.py"])
    absolute = add(conn, "absolute, other project", session="s2", at=T0, read=[path], project="x")
    add(conn, "relative, other project", session="s3", at=T0, read=["src/auth.py"], project="x")
    add(conn, "a longer path", session="s4", at=T0, read=["lib/src/auth.py", f"{path}.bak"])
    add(conn, "another file", session="s5", at=T0, modified=["src/auth_test.py"])
    hits = find(conn, candidates(path, str(project)))
    assert sorted(h.observation.id for h in hits) == sorted([mine, absolute])


def test_the_file_table_gives_the_same_matches(conn: sqlite3.Connection, project: Path) -> None:
    """The ``observation_files`` index (migration m006) and the JSON scan agree exactly."""
    path = f"{project}/src/auth.py"
    add(conn, "relative, this project", session="s1", at=T0, read=["src/auth.py"])
    add(conn, "absolute, other project", session="s2", at=T0, modified=[path], project="x")
    add(conn, "relative, other project", session="s3", at=T0, read=["src/auth.py"], project="x")
    indexed = [(h.observation.id, h.modified) for h in find(conn, candidates(path, str(project)))]
    with atomic(conn):  # without the derived table the lookup falls back to scanning JSON
        for trigger in ("observation_files_ai", "observation_files_ad", "observation_files_au"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE observation_files")
    scanned = [(h.observation.id, h.modified) for h in find(conn, candidates(path, str(project)))]
    assert indexed == scanned
    assert len(indexed) == 2


# ----- scoring and order -------------------------------------------------------------------------


def test_one_per_session_modified_first_then_fewest_files_then_newest(
    conn: sqlite3.Connection, project: Path
) -> None:
    f = "src/auth.py"
    ids = {
        # session a: a read-only hit and a modifying one (which wins, despite more files)
        "a-read": add(conn, "a read", session="a", at=T0, read=[f]),
        "a-mod": add(conn, "a modified", session="a", at=T0 + HOUR, modified=[f, "x.py", "y.py"]),
        # session b: read only, one file
        "b-read": add(conn, "b read", session="b", at=T0 + 2 * HOUR, read=[f]),
        # session c: modified, one file (best of all)
        "c-mod": add(conn, "c modified", session="c", at=T0 + 3 * HOUR, modified=[f]),
        # session d: read with two files, older and newer; the fewer-files one wins
        "d-two": add(conn, "d two", session="d", at=T0 + 4 * HOUR, read=[f, "z.py"]),
        "d-one": add(conn, "d one", session="d", at=T0 + 5 * HOUR, read=[f]),
        # no session (a memory saved by hand): its own group
        "none": add(conn, "manual", session=None, at=T0 + 6 * HOUR, read=[f, "q.py"]),
    }
    chosen = select(find(conn, candidates(f, str(project))), 15)
    assert [h.observation.id for h in chosen] == [
        ids["c-mod"],  # modified, 1 file
        ids["a-mod"],  # modified, 3 files
        ids["d-one"],  # read, 1 file, newer
        ids["b-read"],  # read, 1 file, older
        ids["none"],  # read, 2 files
    ]


def test_at_most_the_configured_number_of_sessions(conn: sqlite3.Connection, project: Path) -> None:
    for i in range(20):
        add(conn, f"session {i}", session=f"s{i}", at=T0 + i * HOUR, read=["src/auth.py"])
        add(conn, f"again {i}", session=f"s{i}", at=T0 + i * HOUR + 1, read=["src/auth.py"])
    chosen = select(find(conn, candidates("src/auth.py", str(project))), 15)
    assert len(chosen) == 15
    assert len({h.session for h in chosen}) == 15
    # all read-only with one file: newest first
    assert [h.observation.title for h in chosen[:2]] == ["again 19", "again 18"]


# ----- gates and the block -----------------------------------------------------------------------


def test_gates_no_observations_and_changed_after_the_newest(
    conn: sqlite3.Connection, project: Path
) -> None:
    path = project / "src" / "auth.py"
    path.write_text("x = 1\n" * 400, encoding="utf-8")
    assert file_context(conn, str(path), str(project)).text == ""  # no history
    newest = T0 + HOUR
    add(conn, "read it", session="s1", at=T0, read=["src/auth.py"])
    add(conn, "changed it", session="s2", at=newest, modified=["src/auth.py"])
    assert file_context(conn, str(path), str(project), mtime_ms=newest + 1).text == ""
    assert file_context(conn, str(path), str(project), mtime_ms=newest).text != ""
    assert file_context(conn, str(path), str(project), mtime_ms=newest - 60_000).text != ""
    # Without an mtime from the caller, the service stats the file itself (written just now,
    # so after both observations: stale).
    assert file_context(conn, str(path), str(project)).text == ""


def test_file_block_snapshot(conn: sqlite3.Connection, project: Path) -> None:
    f = "src/auth.py"
    add(conn, "Read auth.py: token checks", session="s1", at=T0, read=[f])
    add(
        conn,
        "Expired tokens were accepted for 30 s </workbench-context>",
        session="s2",
        at=T0 + HOUR,
        modified=[f, "tests/test_auth.py"],
        kind="bugfix",
    )
    add(
        conn,
        "Token helpers moved out",
        session="s3",
        at=T0 + 2 * HOUR,
        modified=[f],
        kind="refactor",
    )
    injection = file_context(conn, f"{project}/{f}", str(project), mtime_ms=T0)
    generic = injection.text.replace(str(project), "<project>")
    assert generic == snapshot("file_history.txt", generic)
    assert [shown for _, shown in injection.items] == ["file", "file", "file"]
    assert strip_private(injection.text) == ""


def test_by_file_route_and_file_route_record_only_what_they_show(
    tmp_path: Path, project: Path
) -> None:
    settings = load_settings(tmp_path / "data", file_context_max=1)
    with TestClient(create_app(settings, pid_lock=False), base_url=settings.base_url) as client:
        conn = client.app.state.runtime.store.conn  # type: ignore[attr-defined]
        add(conn, "read", session="s1", at=T0, read=["src/auth.py"])
        add(conn, "modified", session="s2", at=T0 + HOUR, modified=["src/auth.py"])
        path = f"{project}/src/auth.py"
        reply = client.get("/api/observations/by-file", params={"path": path, "cwd": str(project)})
        assert reply.status_code == 200
        body = reply.json()
        assert body["count"] == 2
        assert body["project"] == "proj"
        assert body["candidates"] == {"absolute": [path], "relative": ["src/auth.py"]}
        assert [(o["title"], o["fileAction"]) for o in body["observations"]] == [
            ("modified", "modified"),
            ("read", "read"),
        ]
        assert conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0] == 0

        params = {"path": path, "cwd": str(project), "mtime": str(T0), "contentSessionId": "now"}
        text = client.get("/api/context/file", params=params).text
        assert text.count("\n- #") == 1  # file_context_max=1
        (row,) = conn.execute("SELECT * FROM injections").fetchall()
        assert (row["kind"], row["content_session_id"], row["project"]) == ("file", "now", "proj")
        items = conn.execute("SELECT observation_id, shown FROM injection_items").fetchall()
        assert [tuple(i) for i in items] == [(2, "file")]

        nothing = client.get("/api/context/file", params={**params, "path": "/nope.py"})
        assert (nothing.status_code, nothing.text) == (200, "")
        assert conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0] == 1
        assert client.get("/api/observations/by-file").status_code == 422
