"""Two publishes of the same author at once store each row once (review of issue 12, defect 3).

Both runs read the author's marks and content hashes when they begin; DuckLake committed two
appends side by side, so each inserted every new row. Now each run deletes and re-inserts the
author's row in ``publish_locks``: two runs deleting the same row conflict at commit, and the
retry sees the other run's hashes.

Real parts: the session's PostgreSQL as the catalog; ``workbench publish`` as real
subprocesses, stopped at their commit by holding a lock on ``ducklake_snapshot`` from ``psql``
(no sleeps), then released together.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed
from tests.test_team_concurrency import _start_publish, _totals

pytestmark = pytest.mark.slow


def test_two_publishes_of_one_author_at_once_store_each_row_once(
    team_lake: Any, tmp_path: Path
) -> None:
    laptop = machine(tmp_path, "laptop")
    seed(laptop.data_dir, "api", "s1", ["first"])
    init(laptop, team_lake, "api", author="ana")
    laptop.publish_json()
    # The same store in a second data dir (restored there), same author: same rows to publish.
    restored = machine(tmp_path, "restored")
    shutil.copy(laptop.data_dir / "workbench.db", restored.data_dir / "workbench.db")
    init(restored, team_lake, "api", author="ana")
    for m in (laptop, restored):
        seed(m.data_dir, "api", "s2", [f"finding {i}" for i in range(200)], at_ms=1_780_000_100_000)

    with team_lake.cluster.hold_lock(team_lake.database, "ducklake_snapshot"):
        runs = [_start_publish(laptop), _start_publish(restored)]
        team_lake.cluster.wait_for_lock_waiter(team_lake.database, "ducklake_snapshot", count=2)
    outs = [p.communicate(timeout=300) for p in runs]

    for proc, (_, stderr) in zip(runs, outs, strict=True):
        assert proc.returncode == 0, stderr
    added = sorted(json.loads(stdout)["added"]["observations"] for stdout, _ in outs)
    assert added == [0, 200]
    assert _totals(team_lake, tmp_path) == {"ana": 201}
