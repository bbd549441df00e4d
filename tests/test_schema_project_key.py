"""m012: ``project_key`` on sessions, prompts, observations and summaries, from a store at
m011 with rows (two real git checkouts named ``api``), and on every later write."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from tests.conftest import migrate_until
from workbench import locate
from workbench.models import ObservationDraft, SummaryDraft
from workbench.recall.context import ContextLimits, build_session_context
from workbench.store import events, observations, schema, sessions, summaries, transfer
from workbench.store.connection import atomic, connect

TABLES = ("sessions", "user_prompts", "observations", "session_summaries")


def _session_with_rows(conn: sqlite3.Connection, sid: str, project: str, cwd: str | None) -> None:
    """A session as an m011-era service left it: prompt, tool event (with its cwd), an
    observation and a summary, written through today's store functions (their INSERTs are
    the ones every schema accepts)."""
    with atomic(conn):
        session = sessions.ensure(conn, sid, project, "claude-code", 1_000)
        sessions.record_prompt(conn, session, f"prompt of {sid}", 1_000)
        if cwd is not None:
            events.append(
                conn,
                "observation",
                {"tool_name": "Read", "cwd": cwd},
                event_key=None,
                content_session_id=sid,
                project=project,
                enqueue=False,
            )
        observations.insert(
            conn, ObservationDraft(title=f"seen in {sid}"), content_session_id=sid, project=project
        )
        summaries.upsert(
            conn,
            SummaryDraft(request=f"summary of {sid}"),
            content_session_id=sid,
            project=project,
            prompt_number=1,
        )


def _keys(conn: sqlite3.Connection, sid: str) -> set[str | None]:
    found: set[str | None] = set()
    for table in TABLES:
        found |= {
            r[0]
            for r in conn.execute(
                f"SELECT project_key FROM {table} WHERE content_session_id = ?", (sid,)
            )
        }
    return found


def test_m012_keys_existing_rows_by_the_folder_they_were_recorded_in(tmp_path: Path) -> None:
    a, b = tmp_path / "clientA" / "api", tmp_path / "clientB" / "api"
    for repo in (a, b):
        (repo / "src").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    conn = connect(tmp_path / "w.db")
    migrate_until(conn, "m011_summary_updated_at")
    _session_with_rows(conn, "in-a", "api", str(a / "src"))
    _session_with_rows(conn, "in-b", "api", str(b))
    _session_with_rows(conn, "no-cwd", "api", None)  # a prompt only: no tool event, no cwd
    _session_with_rows(conn, "renamed", "api", str(tmp_path / "elsewhere"))  # name differs
    with atomic(conn):
        manual, _ = observations.insert(
            conn, ObservationDraft(title="saved by hand"), content_session_id=None, project="api"
        )

    assert schema.apply(conn, "w.db")[0] == "m012_project_key"

    assert _keys(conn, "in-a") == {str(a.resolve())}
    assert _keys(conn, "in-b") == {str(b.resolve())}
    assert _keys(conn, "no-cwd") == {"api"}  # best effort: its name
    assert _keys(conn, "renamed") == {"api"}  # that folder is "elsewhere", not this "api"
    (manual_key,) = conn.execute(
        "SELECT project_key FROM observations WHERE id = ?", (manual,)
    ).fetchone()
    assert manual_key == "api"
    assert {r[0] for r in conn.execute("SELECT project FROM observations")} == {"api"}

    # What SessionStart shows in clientB/api after the upgrade: its own rows, and the rows
    # whose folder is unknown (keyed by the bare name: nothing is lost on upgrade); never a
    # row recorded in clientA/api.
    identity = locate.project_identity(str(b))
    block = build_session_context(
        conn, [identity.name], ContextLimits(), project_key=identity.key
    ).text
    for shown in ("seen in in-b", "seen in no-cwd", "seen in renamed", "saved by hand"):
        assert shown in block
    assert "seen in in-a" not in block
    identity_a = locate.project_identity(str(a))
    block_a = build_session_context(
        conn, [identity_a.name], ContextLimits(), project_key=identity_a.key
    ).text
    assert "seen in in-a" in block_a
    assert "seen in in-b" not in block_a
    assert schema.apply(conn, "w.db") == []  # applied once, recorded with it


def test_new_rows_take_their_sessions_key(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    schema.apply(conn, "w.db")
    _session_with_rows(conn, "unkeyed", "api", None)
    with atomic(conn):
        keyed = sessions.ensure(conn, "keyed", "api", "claude-code", 0, "/work/clientA/api")
        sessions.record_prompt(conn, keyed, "a prompt", 0)
        observations.insert(
            conn, ObservationDraft(title="t"), content_session_id="keyed", project="api"
        )
        summaries.upsert(
            conn,
            SummaryDraft(request="r"),
            content_session_id="keyed",
            project="api",
            prompt_number=1,
        )
        # An observation stored under another name than its session's keeps its own name.
        odd, _ = observations.insert(
            conn, ObservationDraft(title="odd"), content_session_id="keyed", project="other"
        )
    assert _keys(conn, "unkeyed") == {"api"}
    assert {
        r[0]
        for r in conn.execute(
            "SELECT project_key FROM observations WHERE content_session_id = 'keyed' AND id != ?",
            (odd,),
        )
    } == {"/work/clientA/api"}
    assert _keys(conn, "keyed") == {"/work/clientA/api", "other"}


def test_export_then_import_keeps_each_sessions_folder(tmp_path: Path) -> None:
    """A backup restored on this machine is shown to the same folder's sessions again."""
    source = connect(tmp_path / "a.db")
    schema.apply(source, "a.db")
    with atomic(source):
        sessions.ensure(source, "keyed", "api", "claude-code", 0, "/work/clientA/api")
        observations.insert(
            source, ObservationDraft(title="kept"), content_session_id="keyed", project="api"
        )
    _session_with_rows(source, "by-name", "api", None)
    document = transfer.export(source)
    assert [s.get("project_key") for s in document["sessions"]] == ["/work/clientA/api", None]
    assert all("project_key" not in o for o in document["observations"])

    target = connect(tmp_path / "b.db")
    schema.apply(target, "b.db")
    transfer.import_document(target, transfer.parse(document))
    assert _keys(target, "keyed") == {"/work/clientA/api"}
    assert _keys(target, "by-name") == {"api"}
