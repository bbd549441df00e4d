"""``workbench doctor``'s ``team`` row: a note when unset, the snapshot when the lake answers,
a PROBLEM with the fix when the configured lake does not.

Real parts: the session's PostgreSQL as the catalog, ``workbench doctor --json`` as a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import doctor_rows
from tests.conftest import free_port
from tests.team_harness import init, machine

pytestmark = pytest.mark.slow


def test_doctor_notes_an_unconfigured_team_lake(tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")

    row = doctor_rows(ana.env)["team"]

    assert row["status"] == "info"  # as for agents not on this machine
    assert "workbench team init" in row["detail"]


def test_doctor_shows_the_snapshot_of_a_lake_that_answers(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    init(ana, team_lake, "api", author="ana")
    snapshot = team_lake.query(tmp_path, "SELECT max(snapshot_id) FROM lake.snapshots()")[0][0]

    row = doctor_rows(ana.env)["team"]

    assert row["status"] == "ok"
    assert f"snapshot {snapshot}" in row["detail"]
    assert "ana" in row["detail"]


def test_doctor_flags_an_unreachable_lake_with_the_fix(tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    closed = free_port()  # nothing listens there
    (ana.data_dir / "settings.json").write_text(
        json.dumps(
            {
                "team_catalog": f"postgres://postgres@127.0.0.1:{closed}/lake",
                "team_data": str(tmp_path / "lake"),
                "team_projects": ["api"],
            }
        )
    )

    out = ana.run("doctor", "--json")

    assert out.returncode == 1, out.stderr
    row = {r["check"]: r for r in json.loads(out.stdout)}["team"]
    assert row["status"] == "PROBLEM"
    assert f"127.0.0.1:{closed}" in row["detail"]
    assert "PGPASSWORD" in row["detail"]  # the fix: server up, database, password
