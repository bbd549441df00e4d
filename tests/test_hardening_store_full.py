"""The store step fails for real (the disk refuses a write): the batch must not stay claimed.

The worker claims an event and waits in a (fake) model call; the disk then "fills up"; the
answer arrives and the worker's store step fails; then space returns. Before the fix the
event stayed ``claimed`` until the service restarted. Two real ways to fill the disk:

- ``fsize``, no privileges needed: the service process's file-size limit (``RLIMIT_FSIZE``,
  set from outside with ``prlimit``) is lowered to the current size of its WAL, so the next
  append fails with the kernel's EFBIG, SQLite's "disk I/O error". Python ignores SIGXFSZ, so
  the write fails instead of killing the process. Raising the limit is "space returns".
- ``tmpfs``, when this process may mount: the data dir is a 16 MB tmpfs and a filler file
  takes every free byte, so SQLite gets ENOSPC, "database or disk is full". Deleting the
  filler is "space returns". Skipped where mounting is not allowed.
"""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env, run_workbench
from tests.fake_anthropic import Scripted, message_body
from tests.test_crash import (
    OBSERVATION_XML,
    assert_exactly_once,
    claude_env,
    query,
    read_call,
    wait_for,
)

Switch = Callable[[], None]


def _limit_file_size(pid: int, size: int | None) -> None:
    soft = resource.RLIM_INFINITY if size is None else size
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, resource.RLIM_INFINITY))


def _fill(folder: Path) -> Path:
    """Write a file in ``folder`` until the filesystem says ENOSPC; return it."""
    filler = folder / "filler.bin"
    with filler.open("ab", buffering=0) as out:
        for size in (65536, 512):  # then the last partial block as well
            assert _write_until_error(out, size) == errno.ENOSPC
    return filler


def _write_until_error(out: Any, size: int) -> int | None:
    while True:
        try:
            out.write(b"\0" * size)
        except OSError as exc:
            return exc.errno


@pytest.fixture
def tmpfs_data_dir(data_dir: Path) -> Iterator[Path]:
    """The test's data dir as a small tmpfs (set up before, torn down after, the service)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(data_dir)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield data_dir
    finally:
        subprocess.run(["umount", "-l", str(data_dir)], check=False)


def _a_failed_store_step_is_released_and_stored_once_space_returns(
    svc: Any, fake: Any, held: threading.Event, disk_full: Switch, space_returns: Switch
) -> None:
    svc.post(
        "/api/sessions/init",
        {"contentSessionId": "s1", "project": "proj", "prompt": "read the module"},
    )
    status, queued = svc.post("/api/sessions/observations", read_call(1))
    assert status == 200, queued
    wait_for(lambda: len(fake.requests) == 1, what="the compressor call")
    assert query(svc.data_dir, "SELECT status FROM queue") == [("claimed",)]

    disk_full()
    try:
        held.set()  # the model answers; the worker's store step meets the full disk
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
        space_returns()

    # No restart: the claim was released (with a backoff) and the event is stored.
    health = svc.wait_idle()
    assert health["queue"]["done"] == 1
    assert health["queue"]["claimed"] == 0
    assert len(fake.requests) == 2
    assert_exactly_once(svc.data_dir, 1)
    [(attempts, last_error)] = query(svc.data_dir, "SELECT attempts, last_error FROM queue")
    assert attempts == 0  # the disk's fault, not the event's: no attempt was spent
    assert last_error is None  # cleared by the successful ack


def _script_a_held_answer(fake: Any) -> threading.Event:
    """The first model call waits until the returned event is set; the retry answers at once."""
    release = threading.Event()

    def held_answer(_: Any) -> Scripted:
        release.wait(30)
        return Scripted(200, message_body([{"type": "text", "text": OBSERVATION_XML}]))

    fake.queue_handler(held_answer)
    fake.queue_text(OBSERVATION_XML)
    return release


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs resource.prlimit (Linux)")
def test_store_step_fails_on_the_file_size_limit_then_the_event_is_stored(
    make_service: Any, fake_anthropic: Any
) -> None:
    held = _script_a_held_answer(fake_anthropic)
    svc = make_service(**claude_env(fake_anthropic, WORKBENCH_RETRY_BASE_S="0.05"))
    pid = svc.proc.pid
    wal = svc.data_dir / "workbench.db-wal"
    _a_failed_store_step_is_released_and_stored_once_space_returns(
        svc,
        fake_anthropic,
        held,
        disk_full=lambda: _limit_file_size(pid, wal.stat().st_size),
        space_returns=lambda: _limit_file_size(pid, None),
    )


@pytest.mark.slow
def test_store_step_fails_on_a_full_tmpfs_then_the_event_is_stored(
    tmpfs_data_dir: Path, make_service: Any, fake_anthropic: Any
) -> None:
    held = _script_a_held_answer(fake_anthropic)
    svc = make_service(**claude_env(fake_anthropic, WORKBENCH_RETRY_BASE_S="0.05"))
    assert svc.data_dir == tmpfs_data_dir
    filler = tmpfs_data_dir / "filler.bin"
    _a_failed_store_step_is_released_and_stored_once_space_returns(
        svc,
        fake_anthropic,
        held,
        disk_full=lambda: _fill(tmpfs_data_dir) and None,
        space_returns=lambda: filler.unlink(missing_ok=True),
    )


def _health_says_not_storing_until_a_write_gets_through(
    svc: Any, disk_full: Switch, space_returns: Switch
) -> None:
    svc.post("/api/sessions/init", {"contentSessionId": "s1", "project": "p", "prompt": "go"})
    svc.wait_idle()
    disk_full()
    try:
        refused: dict[str, Any] = {}
        for n in range(400):  # until a write has to grow a file
            status, refused = svc.post("/api/sessions/observations", read_call(n))
            if status != 200:
                break
        assert status == 503, refused
        assert refused["error"] == "STORE_UNAVAILABLE"
        status, health = svc.get("/api/health")
        assert status == 200
        assert health["status"] == "error"
        assert health["store"]["state"] == "not storing"
        assert "disk" in health["reason"]
        status, ready = svc.get("/api/readiness")
        assert status == 503, ready
        shown = run_workbench(base_env(svc.data_dir, svc.port), "status", timeout=60)
        assert "not storing" in shown.stdout, shown.stdout
    finally:
        space_returns()
    status, body = svc.post("/api/sessions/observations", read_call(1000))
    assert status == 200, body
    _, health = svc.get("/api/health")
    assert health["status"] == "ok", health
    assert health["store"]["state"] == "ok"


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs resource.prlimit (Linux)")
def test_health_says_not_storing_while_the_file_size_limit_refuses_writes(
    make_service: Any,
) -> None:
    """The report: disk full dropped events while health said ok. Now a write the disk
    refuses answers 503 (the hook spools), health says the store is not storing, and the
    first write that gets through again clears it."""
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")
    pid = svc.proc.pid
    wal = svc.data_dir / "workbench.db-wal"
    _health_says_not_storing_until_a_write_gets_through(
        svc,
        disk_full=lambda: _limit_file_size(pid, wal.stat().st_size),
        space_returns=lambda: _limit_file_size(pid, None),
    )


def test_health_says_not_storing_while_a_full_tmpfs_refuses_writes(
    tmpfs_data_dir: Path, make_service: Any
) -> None:
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")
    filler = tmpfs_data_dir / "filler.bin"
    _health_says_not_storing_until_a_write_gets_through(
        svc,
        disk_full=lambda: _fill(tmpfs_data_dir) and None,
        space_returns=lambda: filler.unlink(missing_ok=True),
    )
