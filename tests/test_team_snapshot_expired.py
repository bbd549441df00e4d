"""``--at-snapshot N`` for a snapshot ``team maintain`` expired says so (not just "no snapshot").

Real parts: the session's PostgreSQL as the catalog, a data directory in tmp_path, and every
command a real ``python -m workbench`` run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed

pytestmark = pytest.mark.slow


def test_an_expired_snapshot_is_named_as_expired_by_maintain_and_a_future_one_is_not(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["first"])
    init(ana, team_lake, "api", author="ana")
    first = ana.publish_json()["snapshot"]
    seed(ana.data_dir, "api", "s2", ["second"], at_ms=1_780_000_001_000)
    ana.publish_json()
    maintained = ana.run("team", "maintain", "--json", "--older-than", "0s")
    assert maintained.returncode == 0, maintained.stderr
    newest = json.loads(maintained.stdout)["newestSnapshot"]

    expired = ana.run("sql", "--team", "--at-snapshot", str(first), "SELECT 1")
    future = ana.run("sql", "--team", "--at-snapshot", str(newest + 10), "SELECT 1")

    assert expired.returncode == 1
    assert f"no snapshot {first} (expired by `workbench team maintain`)" in expired.stderr
    assert future.returncode == 1
    assert f"no snapshot {newest + 10};" in future.stderr
    assert "expired" not in future.stderr
