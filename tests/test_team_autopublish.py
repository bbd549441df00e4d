"""The service's publisher thread: requests during a run collapse into one more run.

Real parts: the session's PostgreSQL as the catalog, a store seeded with the real ``Store``
API, the real ``AutoPublisher`` and ``publish``. The first run is held at its commit by a
PostgreSQL lock on ``ducklake_snapshot`` (no sleeps) while 50 more requests arrive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed
from workbench.settings import load_settings
from workbench.team.autopublish import AutoPublisher

pytestmark = pytest.mark.slow


def test_requests_during_a_run_collapse_into_one_more_run(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["cache layer", "retry policy"], summary="tidied")
    init(ana, team_lake, "api", author="ana")
    publisher = AutoPublisher(load_settings(ana.data_dir))
    publisher.start()
    try:
        with team_lake.cluster.hold_lock(team_lake.database, "ducklake_snapshot"):
            publisher.request()
            team_lake.cluster.wait_for_lock_waiter(team_lake.database, "ducklake_snapshot")
            for _ in range(50):  # 50 summaries stored while the first run waits to commit
                publisher.request()
        assert publisher.wait_idle(120)
    finally:
        publisher.stop()

    assert publisher.runs == 2  # the held run, then one for all 50 requests
    titles = team_lake.query(tmp_path, "SELECT title FROM lake.observations ORDER BY 1")
    assert titles == [("cache layer",), ("retry policy",)]
    publishes = team_lake.query(
        tmp_path, "SELECT count(*) FROM lake.snapshots() WHERE commit_message LIKE 'publish %'"
    )
    assert publishes == [(1,)]  # the second run found nothing new: no empty snapshot
