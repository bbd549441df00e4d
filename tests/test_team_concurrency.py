"""The lake under concurrency: two publishers at once, a publisher killed, a reader meanwhile.

No sleeps decide anything: a publisher is stopped exactly at its commit by holding a lock on
the catalog's ``ducklake_snapshot`` table (DuckLake's commit inserts there) from ``psql``, and
the test waits until PostgreSQL reports the publisher's backend waiting on that lock.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.team_harness import Machine, forget, init, machine, seed

pytestmark = pytest.mark.slow


def _start_publish(m: Machine) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "publish", "--json", "--data-dir", str(m.data_dir)],
        env=m.env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _totals(lake: Any, tmp: Path, version: int | None = None) -> dict[str, int]:
    at = "" if version is None else f" AT (VERSION => {version})"
    rows = lake.query(
        tmp,
        f"SELECT author, count(*), count(DISTINCT content_hash) FROM lake.observations{at}"
        " GROUP BY ALL ORDER BY 1",
    )
    for author, total, distinct in rows:
        assert total == distinct, f"{author} has doubled rows"
    return {author: total for author, total, _ in rows}


def test_two_publishers_at_once_lose_and_double_nothing(team_lake: Any, tmp_path: Path) -> None:
    ana, bo = machine(tmp_path, "ana"), machine(tmp_path, "bo")
    seed(ana.data_dir, "api", "ana-1", [f"ana finding {i}" for i in range(300)])
    seed(bo.data_dir, "api", "bo-1", [f"bo finding {i}" for i in range(250)])
    init(ana, team_lake, "api", author="ana")
    init(bo, team_lake, "api", author="bo")

    # Both stopped at their commit, then released together: the commits race for real.
    with team_lake.cluster.hold_lock(team_lake.database, "ducklake_snapshot"):
        runs = [_start_publish(ana), _start_publish(bo)]
        team_lake.cluster.wait_for_lock_waiter(team_lake.database, "ducklake_snapshot", count=2)
    outs = [p.communicate(timeout=120) for p in runs]

    for proc, (stdout, stderr) in zip(runs, outs, strict=True):
        assert proc.returncode == 0, stderr
        assert json.loads(stdout)["added"]["observations"] in (300, 250)
    assert _totals(team_lake, tmp_path) == {"ana": 300, "bo": 250}
    snapshots = {json.loads(stdout)["snapshot"] for stdout, _ in outs}
    assert len(snapshots) == 2  # one snapshot each


def test_a_publisher_killed_mid_run_leaves_the_previous_snapshot(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["first"])
    init(ana, team_lake, "api", author="ana")
    before = ana.publish_json()["snapshot"]
    seed(ana.data_dir, "api", "s2", [f"second {i}" for i in range(50)], at_ms=1_780_000_100_000)
    files_before = team_lake.parquet_files()

    with team_lake.cluster.hold_lock(team_lake.database, "ducklake_snapshot"):
        proc = _start_publish(ana)
        team_lake.cluster.wait_for_lock_waiter(team_lake.database, "ducklake_snapshot")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    # Mid-run for real: it had written its Parquet files and was committing.
    assert len(team_lake.parquet_files()) > len(files_before)

    after = team_lake.query(tmp_path, "SELECT max(snapshot_id) FROM lake.snapshots()")[0][0]
    assert after == before
    assert _totals(team_lake, tmp_path) == {"ana": 1}
    marks = team_lake.query(
        tmp_path,
        "SELECT max(mark) FROM lake.publish_marks WHERE table_name = 'observations'",
    )[0][0]
    assert marks == 1  # the killed run's marks went with it
    assert ana.publish_json()["added"]["observations"] == 50  # and nothing is skipped later


def test_a_reader_sees_one_snapshot_while_a_writer_publishes(
    team_lake: Any, tmp_path: Path
) -> None:
    from workbench.team import lake as team

    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["first", "second"])
    init(ana, team_lake, "api", author="ana")
    n = ana.publish_json()["snapshot"]
    seed(ana.data_dir, "api", "s2", [f"more {i}" for i in range(40)], at_ms=1_780_000_100_000)
    reader = team.connect(team_lake.settings(tmp_path / "reader"), create_tables=False)

    with team_lake.cluster.hold_lock(team_lake.database, "ducklake_snapshot"):
        proc = _start_publish(ana)
        team_lake.cluster.wait_for_lock_waiter(team_lake.database, "ducklake_snapshot")
        # The writer has staged its rows and waits to commit: the reader sees snapshot N whole.
        assert team.current_snapshot(reader) == n
        assert reader.execute("SELECT count(*) FROM lake.observations").fetchone()[0] == 2
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    written = json.loads(stdout)["snapshot"]

    assert written == n + 1
    assert reader.execute("SELECT count(*) FROM lake.observations").fetchone()[0] == 42
    assert _totals(team_lake, tmp_path, version=n) == {"ana": 2}
    assert _totals(team_lake, tmp_path, version=written) == {"ana": 42}
    reader.close()


def test_a_tombstone_and_a_concurrent_publish_both_land(team_lake: Any, tmp_path: Path) -> None:
    ana, bo = machine(tmp_path, "ana"), machine(tmp_path, "bo")
    _, gone = seed(ana.data_dir, "api", "ana-1", ["keep", "forget"])
    seed(bo.data_dir, "api", "bo-1", ["bo one"])
    init(ana, team_lake, "api", author="ana")
    init(bo, team_lake, "api", author="bo")
    ana.publish_json()
    forget(ana.data_dir, gone)

    with team_lake.cluster.hold_lock(team_lake.database, "ducklake_snapshot"):
        runs = [_start_publish(ana), _start_publish(bo)]
        team_lake.cluster.wait_for_lock_waiter(team_lake.database, "ducklake_snapshot", count=2)
    outs = [p.communicate(timeout=120) for p in runs]

    for proc, (_, stderr) in zip(runs, outs, strict=True):
        assert proc.returncode == 0, stderr
    results = [json.loads(stdout) for stdout, _ in outs]
    assert results[0]["tombstoned"] == 1
    assert results[1]["added"]["observations"] == 1
    rows = team_lake.query(
        tmp_path,
        "SELECT author, title, deleted_at_epoch IS NOT NULL FROM lake.observations ORDER BY 1, 2",
    )
    assert rows == [("ana", "", True), ("ana", "keep", False), ("bo", "bo one", False)]
