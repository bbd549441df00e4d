"""Forgetting through the service asks its publisher for a run, so the tombstone reaches the
lake without waiting for the next session end (review of issue 12, defect 6).

Real parts: the session's PostgreSQL as the catalog, the real service (``make_service``) with
``team_publish_on_stop`` on, ``workbench publish`` as a CLI run, ``DELETE
/api/observation/{id}`` over HTTP.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import http_json
from tests.team_harness import Machine, seed
from tests.test_team_publish_on_stop import PROJECT, team_env

pytestmark = pytest.mark.slow


def _tombstoned(team_lake: Any, tmp_path: Path, local_id: int, timeout: float = 90.0) -> bool:
    """Whether the lake row is tombstoned within ``timeout`` (the publisher's run is async)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = team_lake.query(
            tmp_path,
            "SELECT deleted_at_epoch IS NOT NULL FROM lake.observations WHERE local_id = ?",
            [local_id],
        )
        if rows == [(True,)]:
            return True
        time.sleep(0.2)
    return False


def test_forget_through_the_service_publishes_the_tombstone(
    team_lake: Any, make_service: Any, tmp_path: Path
) -> None:
    svc = make_service(
        **team_env(
            team_lake, WORKBENCH_TEAM_PUBLISH_ON_STOP="1", WORKBENCH_TEAM_PUBLISH_IDLE_S="3600"
        )
    )
    forgotten, _ = seed(svc.data_dir, PROJECT, "s1", ["zanzibar secret", "zanzibar other"])
    cli = Machine(data_dir=svc.data_dir, env=svc.env)
    assert cli.publish_json()["added"]["observations"] == 2

    status, body = http_json("DELETE", f"{svc.url}/api/observation/{forgotten}", timeout=60)

    assert status == 200, body
    assert _tombstoned(team_lake, tmp_path, forgotten)
    titles = team_lake.query(tmp_path, "SELECT title FROM lake.observations ORDER BY local_id")
    assert titles == [("",), ("zanzibar other",)]
