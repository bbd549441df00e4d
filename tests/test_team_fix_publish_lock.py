"""One publish at a time per data dir: a second run waits for the first (review of issue 12,
defect 3, the local half). The CLI and the service's publisher may both start a run.

Real parts: ``workbench publish`` as a real subprocess; the test holds the data dir's publish
lock itself and reads ``/proc/locks`` until the kernel lists the subprocess waiting on it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed
from tests.test_team_concurrency import _start_publish
from workbench.team.publish import LOCK_FILENAME

pytestmark = pytest.mark.slow


def _wait_for_flock_waiter(path: Path, timeout: float = 60.0) -> None:
    inode = f":{os.stat(path).st_ino} "
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = Path("/proc/locks").read_text("utf-8")
        if any("-> FLOCK" in line and inode in line for line in text.splitlines()):
            return
        time.sleep(0.05)
    raise AssertionError(f"no process waited on {path} within {timeout}s")


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux /proc/locks")
def test_a_second_publish_from_one_data_dir_waits_for_the_first(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["cache layer"])
    init(ana, team_lake, "api", author="ana")
    lock = ana.data_dir / LOCK_FILENAME

    with lock.open("a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a run in progress
        proc = _start_publish(ana)
        _wait_for_flock_waiter(lock)
        assert team_lake.query(tmp_path, "SELECT count(*) FROM lake.observations") == [(0,)]
    stdout, stderr = proc.communicate(timeout=120)

    assert proc.returncode == 0, stderr
    assert json.loads(stdout)["added"]["observations"] == 1
