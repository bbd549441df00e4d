"""``team deny P`` reaches a service that is already running: its publisher reads the
settings file on every run (review of issue 12, defect 4).

Real parts: the session's PostgreSQL as the catalog, a store seeded with the real ``Store``
API, ``workbench team deny`` as a real CLI run, the real ``AutoPublisher`` holding the
settings it was started with (what the service holds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed
from workbench.settings import SETTINGS_FILE, load_settings
from workbench.team import last_publish
from workbench.team.autopublish import AutoPublisher

pytestmark = pytest.mark.slow


def test_deny_stops_the_running_publisher_from_publishing_the_project(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["api note"])
    init(ana, team_lake, "api", "web", author="ana")
    publisher = AutoPublisher(load_settings(ana.data_dir))  # loaded at service start

    denied = ana.run("team", "deny", "web")
    assert denied.returncode == 0, denied.stderr + denied.stdout
    seed(ana.data_dir, "web", "w1", ["private web thing"], at_ms=1_780_000_100_000)
    publisher.publish_once("session end")

    rows = team_lake.query(tmp_path, "SELECT project, title FROM lake.observations ORDER BY 1")
    assert rows == [("api", "api note")]


def test_an_unreadable_settings_file_publishes_nothing(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["api note"])
    init(ana, team_lake, "api", author="ana")
    publisher = AutoPublisher(load_settings(ana.data_dir))

    (ana.data_dir / SETTINGS_FILE).write_text("{not json", encoding="utf-8")
    publisher.publish_once("session end")

    assert team_lake.query(tmp_path, "SELECT count(*) FROM lake.observations") == [(0,)]
    recorded = last_publish.read(publisher.settings)
    assert recorded is not None
    assert recorded["error"]  # the run failed and says why (the file names no lake now)
