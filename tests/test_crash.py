"""Crashes and failures: kill -9 with work claimed, retries with backoff, parked events.

Everything is real: the service is a subprocess killed with SIGKILL, the database is the file
it left behind, and compressor failures come from the real ``anthropic`` client talking to the
fake Anthropic server (``tests/fake_anthropic.py``) over HTTP.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import Scripted, error_body
from workbench.store import events
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow

OBSERVATION_XML = (
    "<observation><type>discovery</type><title>Loader reads the cache first</title>"
    "<narrative>The loader checks the cache before disk.</narrative>"
    "<facts><fact>cache hit skips disk</fact></facts></observation>"
)


# ----- helpers --------------------------------------------------------------------------------
def query(data_dir: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def read_call(n: int) -> dict[str, Any]:
    path = f"/work/proj/module_{n}.py"
    return {
        "contentSessionId": "s1",
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_response": {
            "type": "text",
            "file": {"filePath": path, "content": f"def f{n}():\n    return {n}\n"},
        },
        "cwd": "/work/proj",
        "tool_use_id": f"toolu_{n}",
    }


def claude_env(fake: Any, **extra: str) -> dict[str, str]:
    return {
        "WORKBENCH_COMPRESSOR": "claude",
        "WORKBENCH_ANTHROPIC_BASE_URL": fake.base_url,
        "WORKBENCH_ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_API_KEY": "test",
        "WORKBENCH_RETRY_BASE_S": "0.05",
        "WORKBENCH_MAX_ATTEMPTS": "3",
        "WORKBENCH_LLM_TIMEOUT_S": "10",
        **extra,
    }


def wait_for(predicate: Any, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def assert_exactly_once(data_dir: Path, expected_events: int) -> None:
    """Every observation event done once, one observation per event, no duplicates, no rot."""
    event_ids = [r[0] for r in query(data_dir, "SELECT id FROM events WHERE kind='observation'")]
    assert len(event_ids) == expected_events
    queue = query(data_dir, "SELECT event_id, status FROM queue ORDER BY event_id")
    assert queue == [(e, "done") for e in sorted(event_ids)]
    per_event = query(
        data_dir,
        "SELECT e.id, count(o.id) FROM events e LEFT JOIN observations o ON o.event_id = e.id"
        " WHERE e.kind = 'observation' GROUP BY e.id",
    )
    assert all(n == 1 for _, n in per_event), per_event
    hashes = query(data_dir, "SELECT count(*), count(DISTINCT content_hash) FROM observations")
    assert hashes == [(expected_events, expected_events)]
    assert query(data_dir, "PRAGMA integrity_check") == [("ok",)]


# ----- kill -9 --------------------------------------------------------------------------------
def test_kill9_under_load_then_restart_processes_everything_once(make_service: Any) -> None:
    first = make_service()
    first.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the modules"},
    )
    total = 40
    for n in range(total):
        status, body = first.post("/api/sessions/observations", read_call(n))
        assert (status, body["status"]) == (200, "queued")
    first.kill9()  # the worker is mid-queue: some done, some pending, maybe one claimed

    # Everything acknowledged with 200 survived the kill.
    assert query(first.data_dir, "SELECT count(*) FROM queue") == [(total,)]

    second = make_service()
    health = second.wait_idle()
    assert health["queue"] == {"pending": 0, "claimed": 0, "done": total, "failed": 0}
    assert_exactly_once(second.data_dir, total)


def test_work_claimed_by_a_dead_process_is_requeued_and_done_once(make_service: Any) -> None:
    first = make_service()
    first.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the module"},
    )
    first.stop()

    # While nothing runs, leave an event claimed by a worker that no longer exists.
    with Store(first.data_dir / "workbench.db") as store:
        conn = store.conn
        with atomic(conn):
            event_id, _ = events.append(
                conn,
                "observation",
                {
                    k: v
                    for k, v in read_call(1).items()
                    if k in ("tool_name", "tool_input", "tool_response", "cwd", "tool_use_id")
                },
                event_key="tool:s1:toolu_1",
                content_session_id="s1",
                project="proj",
                prompt_number=1,
                enqueue=True,
            )
        assert [e.id for e in events.claim(conn, worker="pid:999999")] == [event_id]
    assert query(first.data_dir, "SELECT status, claimed_by FROM queue") == [
        ("claimed", "pid:999999")
    ]

    second = make_service()
    health = second.wait_idle()
    assert query(second.data_dir, "SELECT status, attempts, claimed_by FROM queue") == [
        ("done", 0, f"pid:{health['pid']}")
    ]
    assert_exactly_once(second.data_dir, 1)
    assert "re-queued 1 events" in second.log_path.read_text(encoding="utf-8")
    # A retried hook delivery of the same call is still a duplicate after the restart.
    _, again = second.post("/api/sessions/observations", read_call(1))
    assert (again["status"], again["eventId"]) == ("duplicate", event_id)


def test_kill9_during_a_slow_compression_then_restart(
    make_service: Any, fake_anthropic: Any
) -> None:
    fake_anthropic.queue_text(OBSERVATION_XML, delay=30)  # the worker will hang in this call
    first = make_service(**claude_env(fake_anthropic))
    first.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the module"},
    )
    first.post("/api/sessions/observations", read_call(1))
    wait_for(lambda: len(fake_anthropic.requests) == 1, what="the compressor call")
    assert query(first.data_dir, "SELECT status FROM queue") == [("claimed",)]
    first.kill9()

    fake_anthropic.queue_text(OBSERVATION_XML)  # the restarted worker gets a prompt answer
    second = make_service(**claude_env(fake_anthropic))
    health = second.wait_idle()
    assert health["queue"]["done"] == 1
    assert len(fake_anthropic.requests) == 2
    assert_exactly_once(second.data_dir, 1)
    [(title, generated_by)] = query(second.data_dir, "SELECT title, generated_by FROM observations")
    assert title == "Loader reads the cache first"
    assert generated_by.startswith("claude:")


def test_backlog_after_restart_summarizes_after_its_observations(make_service: Any) -> None:
    """A restart finds a prompt's tool calls and its Stop all pending (a spool replay or a
    crash): the summary must still be derived after, and from, those observations."""
    first = make_service()
    first.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "fix the loader"},
    )
    first.stop()
    edit = {
        "tool_name": "Edit",
        "cwd": "/work/proj",
        "tool_use_id": "toolu_edit",
        "tool_input": {
            "file_path": "/work/proj/loader.py",
            "old_string": "pass",
            "new_string": "return cache.get(key)",
        },
        "tool_response": {"filePath": "/work/proj/loader.py"},
    }
    with Store(first.data_dir / "workbench.db") as store:
        conn = store.conn
        with atomic(conn):
            for kind, payload in (
                ("observation", edit),
                ("summarize", {"last_assistant_message": "Fixed it."}),
            ):
                events.append(
                    conn,
                    kind,
                    payload,
                    event_key=None,
                    content_session_id="s1",
                    project="proj",
                    prompt_number=1,
                    enqueue=True,
                )

    second = make_service()
    second.wait_idle()
    _, page = second.get("/api/summaries")
    [summary] = page["items"]
    assert summary["files_edited"] == ["loader.py"]
    assert "Edited loader.py" in summary["completed"]


# ----- failures, backoff, parking, retry ------------------------------------------------------
def test_auth_error_parks_the_event_at_once_with_its_reason(
    make_service: Any, fake_anthropic: Any
) -> None:
    fake_anthropic.queue_error(401, "authentication_error", "invalid x-api-key")
    svc = make_service(**claude_env(fake_anthropic))
    svc.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the module"},
    )
    _, queued = svc.post("/api/sessions/observations", read_call(1))
    health = svc.wait_idle()

    assert health["queue"]["failed"] == 1
    assert len(fake_anthropic.requests) == 1  # not retried: a bad key will not fix itself
    sent = fake_anthropic.requests[0].headers
    assert "test" in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))
    _, stats = svc.get("/api/stats")
    [parked] = stats["failed"]
    assert parked["eventId"] == queued["eventId"]
    assert parked["attempts"] == 1
    assert parked["reason"].startswith("auth: ")
    assert "invalid x-api-key" in parked["reason"]
    assert "ANTHROPIC_API_KEY" in parked["reason"]  # the fix
    assert stats["worker"]["lastError"] == parked["reason"]
    status, failed = svc.get("/api/queue/failed")
    assert status == 200
    assert failed["count"] == 1
    assert failed["items"][0]["reason"] == parked["reason"]
    assert query(svc.data_dir, "SELECT count(*) FROM observations") == [(0,)]


def test_rate_limit_is_retried_with_backoff_then_parked_then_retry_requeues(
    make_service: Any, fake_anthropic: Any
) -> None:
    seen: list[float] = []

    def rate_limited(_: Any) -> Scripted:
        seen.append(time.monotonic())
        return Scripted(429, error_body("rate_limit_error", "slow down"))

    for _ in range(3):
        fake_anthropic.queue_handler(rate_limited)
    svc = make_service(**claude_env(fake_anthropic))
    svc.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the module"},
    )
    _, queued = svc.post("/api/sessions/observations", read_call(1))
    health = svc.wait_idle()

    assert health["queue"]["failed"] == 1
    assert len(fake_anthropic.requests) == 3  # WORKBENCH_MAX_ATTEMPTS
    [(attempts, status, reason)] = query(
        svc.data_dir, "SELECT attempts, status, last_error FROM queue"
    )
    assert (attempts, status) == (3, "failed")
    assert reason.startswith("rate_limit: ")
    _, failed = svc.get("/api/queue/failed")
    assert [i["eventId"] for i in failed["items"]] == [queued["eventId"]]

    # Backed off between attempts (at least 0.05 s, then 0.1 s): never an immediate retry.
    assert seen[1] - seen[0] >= 0.05
    assert seen[2] - seen[1] >= 0.1

    fake_anthropic.queue_text(OBSERVATION_XML)
    status, body = svc.post("/api/queue/retry", {})
    assert (status, body) == (200, {"requeued": 1})
    health = svc.wait_idle()
    assert health["queue"] == {"pending": 0, "claimed": 0, "done": 1, "failed": 0}
    _, failed = svc.get("/api/queue/failed")
    assert failed == {"items": [], "count": 0}
    assert_exactly_once(svc.data_dir, 1)


def test_retry_of_named_events_requeues_only_those(make_service: Any, fake_anthropic: Any) -> None:
    fake_anthropic.queue_error(401, "authentication_error", "bad key")
    fake_anthropic.queue_error(401, "authentication_error", "bad key")
    svc = make_service(**claude_env(fake_anthropic))
    svc.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the modules"},
    )
    _, one = svc.post("/api/sessions/observations", read_call(1))
    _, two = svc.post("/api/sessions/observations", read_call(2))
    svc.wait_idle()
    assert svc.get("/api/stats")[1]["queue"]["failed"] == 2

    fake_anthropic.queue_text(OBSERVATION_XML)
    status, body = svc.post("/api/queue/retry", {"eventIds": [two["eventId"]]})
    assert (status, body) == (200, {"requeued": 1})
    svc.wait_idle()
    statuses = dict(query(svc.data_dir, "SELECT event_id, status FROM queue"))
    assert statuses == {one["eventId"]: "failed", two["eventId"]: "done"}
