"""Another process holds the database's write lock: the service must stay responsive.

Real parts only: a second process opens ``workbench.db`` with the standard ``sqlite3`` module
and holds ``BEGIN EXCLUSIVE`` until the test lets go; the hooks are the real scripts run as
subprocesses; the service is a real uvicorn process. While the lock is held, ``/api/health``
answers, hook posts get a 503 ``STORE_BUSY`` (so the hook spools instead of waiting out its
2 s), and after the lock is released the spool replays and every event is stored once.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env, run_workbench
from tests.hook_harness import load_payload, run_hook, spooled
from tests.test_crash import query

pytestmark = pytest.mark.slow

LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()  # hold the lock until the test closes our stdin
conn.execute("COMMIT")
"""


@contextmanager
def external_write_lock(db: Path) -> Iterator[None]:
    """A real second process holding ``BEGIN EXCLUSIVE`` on ``db`` for the block's duration."""
    proc = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0


def read_payload(tmp_path: Path, n: int) -> dict[str, Any]:
    """The real PostToolUse Read fixture, made distinct per ``n`` (its own call and file)."""
    payload = load_payload("post_tool_use_read", tmp_path)
    path = f"/home/dev/code/acme-api/src/acme/module_{n}.py"
    payload["tool_use_id"] = f"toolu_read_{n}"
    payload["tool_input"] = {"file_path": path}
    payload["tool_response"]["file"].update(
        filePath=path, content=f"def handler_{n}():\n    return {n}\n"
    )
    return payload


def stored_tool_calls(svc: Any) -> list[str]:
    """The tool_use_id of every stored tool call, in the order the events log holds them."""
    stored = query(
        svc.data_dir,
        "SELECT json_extract(payload, '$.tool_use_id') FROM events WHERE kind = 'observation'"
        " ORDER BY id",
    )
    return [r[0] for r in stored]


def test_an_external_write_lock_never_freezes_health_and_hooks_spool_then_replay(
    make_service: Any, tmp_path: Path
) -> None:
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")  # replay when the test says
    env = base_env(svc.data_dir, svc.port)
    prompt = load_payload("user_prompt_submit", tmp_path)
    run_hook("user_prompt_submit", prompt, env).output()
    assert spooled(svc.data_dir) == []  # delivered: the session exists
    direct = {
        "contentSessionId": prompt["session_id"],
        "tool_name": "Read",
        "tool_input": {"file_path": "/home/dev/code/acme-api/README.md"},
        "tool_response": {"type": "text", "file": {"content": "readme"}},
        "cwd": prompt["cwd"],
        "tool_use_id": "toolu_direct",
    }
    hook_calls = 4

    with external_write_lock(svc.data_dir / "workbench.db"):
        # A hook request waits on the lock while health is asked: the loop must stay free.
        answers: dict[str, tuple[int, Any]] = {}
        poster = threading.Thread(
            target=lambda: answers.update(
                direct=svc.post("/api/sessions/observations", direct, timeout=30)
            )
        )
        poster.start()
        for _ in range(3):
            status, health = svc.get("/api/health", timeout=5)  # a freeze would time out
            assert status == 200
            assert health["service"] == "workbench"
        poster.join()
        status, refused = answers["direct"]
        assert status == 503, refused
        assert refused["error"] == "STORE_BUSY"
        assert "locked" in refused["message"]
        status, health = svc.get("/api/health", timeout=5)
        assert status == 200
        assert health["store"]["state"] == "busy"
        assert "another process" in health["store"]["reason"]
        shown = run_workbench(env, "status", timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert "store busy" in shown.stdout

        # SessionStart still injects memory: the ledger row gives way, not the context.
        start = load_payload("session_start_startup", tmp_path)
        started = run_hook("session_start", start, env).output()
        assert started is not None
        assert "additionalContext" in started.get("hookSpecificOutput", {}), started

        for n in range(hook_calls):
            assert run_hook("post_tool_use", read_payload(tmp_path, n), env).output() == {}
        assert len(spooled(svc.data_dir)) == hook_calls  # refused with 503, so spooled

    # The service replays on its own soon after a refusal (the next test); this asks now.
    status, report = svc.post("/api/spool/replay")
    assert status == 200, report
    assert report["replayed"] <= hook_calls
    assert spooled(svc.data_dir) == []
    svc.wait_idle()
    assert stored_tool_calls(svc) == [f"toolu_read_{n}" for n in range(hook_calls)]
    assert query(svc.data_dir, "SELECT status, count(*) FROM queue GROUP BY status") == [
        ("done", hook_calls)
    ]
    assert query(svc.data_dir, "SELECT count(*) FROM observations") == [(hook_calls,)]
    assert query(svc.data_dir, "PRAGMA integrity_check") == [("ok",)]


def test_what_hooks_spooled_on_a_503_is_replayed_soon_without_a_later_event(
    make_service: Any, tmp_path: Path
) -> None:
    """A hook refused with a 503 (here ``STORE_BUSY``) spools its event. The periodic replay
    is set to an hour, and no later event of the session comes to replay it ahead: a
    session's last events (its Stop) waited for the periodic round, 30 s by default. The
    service now replays soon after it refused, again while the store stays busy."""
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")
    env = base_env(svc.data_dir, svc.port)
    prompt = load_payload("user_prompt_submit", tmp_path)
    run_hook("user_prompt_submit", prompt, env).output()
    hook_calls = 3
    with external_write_lock(svc.data_dir / "workbench.db"):
        for n in range(hook_calls):
            assert run_hook("post_tool_use", read_payload(tmp_path, n), env).output() == {}
        assert len(spooled(svc.data_dir)) == hook_calls  # refused with 503, so spooled
        time.sleep(3)  # rounds meanwhile find the store busy, and try again
    deadline = time.monotonic() + 30
    while spooled(svc.data_dir):
        assert time.monotonic() < deadline, "the spooled events were not replayed"
        time.sleep(0.2)
    svc.wait_idle()
    assert stored_tool_calls(svc) == [f"toolu_read_{n}" for n in range(hook_calls)]
