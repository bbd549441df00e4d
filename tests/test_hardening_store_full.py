"""The store step fails for real (the disk refuses a write): the batch must not stay claimed.

How the failure is made real without root: the service process's file-size limit
(``RLIMIT_FSIZE``, set from outside with ``prlimit``) is lowered to the current size of its
WAL while the worker waits on a (fake) model call, so the worker's store step fails with the
kernel's EFBIG — SQLite's "disk I/O error", the same path as a full disk. Raising the limit
again is "space returns". Python ignores SIGXFSZ, so the write fails instead of killing.
"""

from __future__ import annotations

import resource
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import Scripted, message_body
from tests.test_crash import (
    OBSERVATION_XML,
    assert_exactly_once,
    claude_env,
    query,
    read_call,
    wait_for,
)

pytestmark = pytest.mark.skipif(
    not hasattr(resource, "prlimit"), reason="needs resource.prlimit (Linux)"
)


def _limit_file_size(pid: int, size: int | None) -> None:
    soft = resource.RLIM_INFINITY if size is None else size
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, resource.RLIM_INFINITY))


def test_a_failed_store_step_releases_its_claim_and_the_event_is_stored_later(
    make_service: Any, fake_anthropic: Any
) -> None:
    answered = threading.Event()
    release = threading.Event()

    def held_answer(_: Any) -> Scripted:
        release.wait(30)  # the worker has claimed the event and waits in this call
        answered.set()
        return Scripted(200, message_body([{"type": "text", "text": OBSERVATION_XML}]))

    fake_anthropic.queue_handler(held_answer)
    fake_anthropic.queue_text(OBSERVATION_XML)  # the retry after the space came back
    svc = make_service(**claude_env(fake_anthropic, WORKBENCH_RETRY_BASE_S="0.05"))
    assert svc.proc is not None
    svc.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the module"},
    )
    status, queued = svc.post("/api/sessions/observations", read_call(1))
    assert status == 200, queued
    wait_for(lambda: len(fake_anthropic.requests) == 1, what="the compressor call")
    assert query(svc.data_dir, "SELECT status FROM queue") == [("claimed",)]

    wal = Path(svc.data_dir / "workbench.db-wal")
    _limit_file_size(svc.proc.pid, wal.stat().st_size)  # the disk is full from now on
    try:
        release.set()
        wait_for(answered.is_set, what="the held answer")
        wait_for(
            lambda: "worker step failed" in svc.log_path.read_text(errors="replace"),
            what="the store step to fail",
        )
        assert query(svc.data_dir, "SELECT count(*) FROM observations") == [(0,)]
        # A hook posting meanwhile is told to spool (503), not given a bare 500.
        status, refused = svc.post("/api/sessions/observations", read_call(2))
        assert status == 503, refused
        assert refused["error"] == "STORE_UNAVAILABLE"
        assert "nothing was stored" in refused["message"]
    finally:
        _limit_file_size(svc.proc.pid, None)  # space returns

    # No restart: the claim was released (with a backoff) and the event is stored.
    health = svc.wait_idle(timeout=20)
    assert health["queue"]["done"] == 1
    assert health["queue"]["claimed"] == 0
    assert len(fake_anthropic.requests) == 2
    assert_exactly_once(svc.data_dir, 1)
    [(attempts, last_error)] = query(svc.data_dir, "SELECT attempts, last_error FROM queue")
    assert attempts == 0  # the disk's fault, not the event's: no attempt was spent
    assert last_error is None  # cleared by the successful ack
