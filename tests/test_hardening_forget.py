"""Forgetting really forgets (issue 9, item 8).

- End to end: a memory holding a unique marker goes hook (spooled while the service is down)
  → service → worker; ``workbench forget`` deletes it; then not one byte of the marker is
  left in the data dir (database, WAL, spool and its ``processed/`` copy, logs, indexes) or
  the service's log. A recompress and an import of an export taken before the deletion do
  not bring it back.
- The log records the scrub: the source event's payload is its sha256, a ``scrub`` event
  names it, and the append-only trigger refuses every other update.
- Library level, real store: a re-derivation worded differently, and an import of an older
  wording, are both refused (tombstone keyed on the source, not only the hash); an
  observation deleted before scrubbing existed is scrubbed when forgotten again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, Service, http_json
from tests.hook_harness import load_payload, run_hook
from tests.test_hardening_newuser import http_json_or_none
from workbench import forget
from workbench.derive import store_result
from workbench.models import CompressionResult, ObservationDraft
from workbench.store import deletions, events, observations, transfer
from workbench.store.connection import atomic
from workbench.store.database import Store

MARKER = "zqxforgetmarker7731"  # lowercase: the FTS index stores tokens lowercased


def marked_bash(marker: str) -> dict[str, Any]:
    """A real PostToolUse (Bash) payload whose output the offline compressor keeps as a fact."""
    payload = load_payload("post_tool_use_bash_pytest_fail")
    payload["tool_input"] = {"command": "grep -rn rotation src/", "description": "Find it"}
    payload["tool_response"] = {
        "stdout": f"src/acme/auth.py:3: # {marker} rotation\n",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
    }
    return payload


def where_is(marker: str, *roots: Path) -> list[str]:
    """Every file under ``roots`` whose raw bytes hold ``marker`` (any case)."""
    needles = {marker.encode(), marker.upper().encode(), marker.encode("utf-16-le")}
    found = []
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            data = path.read_bytes()
            if any(n in data or n in data.lower() for n in needles):
                found.append(str(path))
    return found


def read_db(svc: Service, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    conn = sqlite3.connect(f"file:{svc.data_dir / 'workbench.db'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def marked_ids(svc: Service) -> list[int]:
    rows = read_db(
        svc,
        "SELECT id FROM observations WHERE instr(lower(title || subtitle || narrative || facts"
        " || concepts), ?) ORDER BY id",
        (MARKER,),
    )
    return [int(r["id"]) for r in rows]


def workbench_cli(svc: Service, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args, "--data-dir", str(svc.data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=svc.env,
    )


# ----- end to end -------------------------------------------------------------------------------


def test_forget_leaves_no_byte_of_the_memory_and_nothing_revives_it(
    make_service: Any, tmp_path: Path
) -> None:
    svc = make_service(start=False)
    # The service is down: both hooks spool, so the spool holds the marker too.
    assert (
        run_hook("user_prompt_submit", load_payload("user_prompt_submit"), svc.env).returncode == 0
    )
    assert run_hook("post_tool_use", marked_bash(MARKER), svc.env).returncode == 0
    assert where_is(MARKER, svc.data_dir / "spool")
    svc.start()  # replays the spool (envelopes move to spool/processed), the worker derives
    svc.wait_idle()
    ids = marked_ids(svc)
    assert ids, "the marker did not reach an observation; the test would prove nothing"
    (source,) = read_db(svc, "SELECT DISTINCT event_id FROM observations WHERE id = ?", ids[:1])
    event_id = int(source["event_id"])
    (event,) = read_db(svc, "SELECT payload FROM events WHERE id = ?", (event_id,))
    assert MARKER in event["payload"]
    payload_sha = hashlib.sha256(event["payload"].encode("utf-8")).hexdigest()
    status, export = svc.get("/api/export")
    assert status == 200
    assert MARKER in json.dumps(export)
    assert where_is(MARKER, svc.data_dir / "spool" / "processed")
    stored = {Path(p).name for p in where_is(MARKER, svc.data_dir)}
    assert stored & {"workbench.db", "workbench.db-wal"}  # the scan can see it in the store

    proc = workbench_cli(svc, "forget", *map(str, ids), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["forgotten"] == ids
    assert report["notFound"] == []
    assert report["alreadyDeleted"] == []
    assert report["scrubbed"]["observationIds"] == ids
    assert report["scrubbed"]["eventIds"] == [event_id]
    assert report["scrubbed"]["ftsRows"] == len(ids)
    (spool_copy,) = report["scrubbed"]["spoolFiles"]  # the replayed envelope, delivered
    assert spool_copy.startswith("processed/")
    assert spool_copy.endswith(".json")
    assert report["purge"] == {"ftsMerged": True, "vacuumed": True, "walTruncated": True}

    # Not one byte left: database, WAL, spool (pending + processed), logs, indexes, and the
    # service's own log (outside the data dir).
    assert where_is(MARKER, svc.data_dir, svc.log_path) == []

    # The log says what happened: the payload is its hash, a scrub record names it.
    (after,) = read_db(svc, "SELECT payload FROM events WHERE id = ?", (event_id,))
    assert json.loads(after["payload"]) == {"scrubbed": payload_sha}
    (record,) = read_db(svc, "SELECT payload FROM events WHERE kind = 'scrub'")
    assert json.loads(record["payload"]) == {
        "event_id": event_id,
        "sha256": payload_sha,
        "kind": "observation",
        "observation_ids": ids,
        "reason": "forget",
    }

    # Nothing brings it back: recompress, an import of the old export, a replayed hook event.
    status, recompressed = svc.post("/api/recompress", {})
    assert status == 200, recompressed
    status, imported = svc.post("/api/import", export)
    assert status == 200, imported
    assert imported["imported"]["observations"]["imported"] == 0
    # the same tool call delivered again (a hook retry, same tool_use_id): a duplicate
    assert run_hook("post_tool_use", marked_bash(MARKER), svc.env).returncode == 0
    svc.wait_idle()
    assert marked_ids(svc) == []
    assert where_is(MARKER, svc.data_dir, svc.log_path) == []
    status, found = svc.get(f"/api/search?query={MARKER}&format=json&type=observations")
    assert status == 200
    assert {hit["id"] for hit in found["observations"]} & set(ids) == set()
    # Forgetting the same ids again is reported, not an error.
    second = json.loads(workbench_cli(svc, "forget", str(ids[0]), "--json").stdout)
    assert second["alreadyDeleted"] == [ids[0]]
    assert second["forgotten"] == []


def test_delete_route_reports_what_it_scrubbed(make_service: Any) -> None:
    svc = make_service()
    status, saved = svc.post("/api/memory/save", {"text": f"remember {MARKER}", "project": "p"})
    assert status == 200, saved
    status, answer = http_json("DELETE", f"{svc.url}/api/observation/{saved['id']}")
    assert status == 200, answer
    assert answer["deleted"] is True
    assert answer["forgotten"] == [saved["id"]]
    assert answer["scrubbed"]["eventIds"] == [answer["eventId"]]
    assert answer["purge"]["vacuumed"] is True
    assert where_is(MARKER, svc.data_dir) == []


def test_forget_cli_without_a_service_starts_a_temporary_one_and_stops_it(
    make_service: Any,
) -> None:
    """The one rule of every command that needs the service (issue 19, item 13)."""
    svc = make_service(start=False)
    proc = workbench_cli(svc, "forget", "1", "--json")
    assert proc.returncode == 1, proc.stderr  # id 1 does not exist: named, exit 1
    assert json.loads(proc.stdout)["notFound"] == [1]
    assert "temporary" in proc.stderr
    assert "stopped the temporary workbench service" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert http_json_or_none(f"{svc.url}/api/health") is None


def test_forget_cli_names_ids_it_did_not_find(make_service: Any) -> None:
    svc = make_service()
    proc = workbench_cli(svc, "forget", "424242", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["notFound"] == [424242]


# ----- the log's one sanctioned rewrite -----------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with Store(tmp_path / "workbench.db") as opened:
        yield opened


def _observed(store: Store, title: str, csid: str = "s1") -> tuple[int, int]:
    """One observation event and the observation derived from it: (event_id, observation_id)."""
    conn = store.conn
    with atomic(conn):
        event_id, _ = events.append(
            conn,
            "observation",
            {"tool_name": "Bash", "tool_response": {"stdout": f"{title} {MARKER}"}},
            event_key=f"key-{title}",
            content_session_id=csid,
            project="p",
            enqueue=True,
            received_ms=1_700_000_000_000,
        )
    event = events.get(conn, event_id)
    assert event is not None
    derived = store_result(
        store,
        event,
        CompressionResult(
            observations=[ObservationDraft(type="discovery", title=title, narrative=MARKER)],
            generated_by="offline",
        ),
    )
    return event_id, derived.observation_ids[0]


def test_only_scrub_may_rewrite_an_event(store: Store) -> None:
    conn = store.conn
    event_id, _ = _observed(store, "first")
    for sql, params in (
        ("UPDATE events SET payload = json_object('scrubbed', 'x') WHERE id = ?", (event_id,)),
        ("UPDATE events SET project = 'q' WHERE id = ?", (event_id,)),
        ("DELETE FROM events WHERE id = ?", (event_id,)),
    ):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql, params)
    with atomic(conn):
        done = events.scrub(conn, event_id, observation_ids=[])
    assert done is not None
    assert not done.already
    # a second scrub changes nothing; the scrub record itself can never be rewritten
    with atomic(conn):
        again = events.scrub(conn, event_id, observation_ids=[])
    assert again is not None
    assert again.already
    assert again.record_id == done.record_id
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute(
            "UPDATE events SET payload = json_object('scrubbed', 'x') WHERE id = ?",
            (done.record_id,),
        )
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute(
            "UPDATE events SET payload = json_object('scrubbed', 'other') WHERE id = ?",
            (event_id,),
        )
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_rewording_rederivation_does_not_revive_a_forgotten_memory(
    store: Store, tmp_path: Path
) -> None:
    conn = store.conn
    event_id, obs_id = _observed(store, "original wording")
    report = forget.forget(conn, tmp_path / "spool", [obs_id])
    assert [d.id for d in report.deleted] == [obs_id]
    event = events.get(conn, event_id)
    assert event is not None
    reworded = CompressionResult(
        observations=[ObservationDraft(type="discovery", title="new words", narrative="other")],
        generated_by="claude",
    )
    derived = store_result(store, event, reworded, replace=True)
    assert derived.observation_ids == []
    assert events.select_for_recompress(conn, project=None, since_ms=None) == []


def test_an_older_wording_in_an_export_is_not_imported(store: Store, tmp_path: Path) -> None:
    conn = store.conn
    _, obs_id = _observed(store, "worded once")
    document = transfer.export(conn)
    old = document["observations"][0]
    forget.forget(conn, tmp_path / "spool", [obs_id])
    # the same memory as an export from before a recompress had worded it differently
    older = {**old, "title": "worded before", "narrative": "an earlier summary"}
    for row in (old, older):
        report = transfer.import_document(conn, transfer.parse({**document, "observations": [row]}))
        assert report["observations"] == {"imported": 0, "skipped": 1}
    assert observations.get(conn, obs_id) is None
    assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 0
    # an unrelated row of the same file still imports
    other = {**old, "title": "another memory", "created_at_epoch": old["created_at_epoch"] + 1}
    report = transfer.import_document(conn, transfer.parse({**document, "observations": [other]}))
    assert report["observations"] == {"imported": 1, "skipped": 0}


def test_an_earlier_deletion_is_scrubbed_when_forgotten_again(store: Store, tmp_path: Path) -> None:
    conn = store.conn
    event_id, obs_id = _observed(store, "deleted the old way")
    # what DELETE did before scrubbing existed: tombstone + row gone, event untouched
    with atomic(conn):
        conn.execute(
            "INSERT INTO deleted_observations (content_hash, observation_id, event_id,"
            " content_session_id, project, deleted_at, deleted_at_epoch)"
            " SELECT content_hash, id, event_id, content_session_id, project, 'x', 1"
            " FROM observations WHERE id = ?",
            (obs_id,),
        )
        conn.execute("DELETE FROM observations WHERE id = ?", (obs_id,))
    assert (
        MARKER in conn.execute("SELECT payload FROM events WHERE id = ?", (event_id,)).fetchone()[0]
    )
    report = forget.forget(conn, tmp_path / "spool", [obs_id])
    assert report.already_deleted == [obs_id]
    assert report.scrubbed_event_ids == [event_id]
    assert deletions.was_deleted(conn, obs_id)
    assert (
        MARKER
        not in conn.execute("SELECT payload FROM events WHERE id = ?", (event_id,)).fetchone()[0]
    )


def test_purge_clears_stale_copies_where_sqlite_keeps_deleted_bytes(
    store: Store, tmp_path: Path
) -> None:
    """Most SQLite builds leave a deleted row's bytes in the page (``secure_delete`` off by
    default; this machine's build has it on, so the test turns it off): an earlier wording,
    deleted by a recompress, still sits in the file until ``purge`` rebuilds it."""
    conn = store.conn
    conn.execute("PRAGMA secure_delete = 0")

    def add(title: str, narrative: str) -> int:
        draft = ObservationDraft(type="discovery", title=title, narrative=narrative)
        with atomic(conn):
            return observations.insert(conn, draft, content_session_id="s", project="p")[0]

    for i in range(30):
        add(f"other {i}", f"filler words number {i} " * 5)
    first = add("marked", f"about {MARKER} rotation")
    with atomic(conn):
        observations.delete_ids(conn, [first])  # what recompress does to an old wording
    second = add("marked again", f"about {MARKER} rotation, reworded")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert where_is(MARKER, tmp_path)
    report = forget.forget(conn, tmp_path / "spool", [second])
    assert report.purge is not None
    assert report.purge.vacuumed
    assert where_is(MARKER, tmp_path) == []
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 0  # restored
    assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 30
