"""``workbench timeline --team``: colleagues' observations of the same window, in time order.

Real parts: the session's PostgreSQL as the DuckLake catalog, two authors publishing with
``workbench publish``, every timeline a real ``python -m workbench`` run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed

pytestmark = pytest.mark.slow

T = 1_780_000_000_000


def test_timeline_team_interleaves_the_window_and_names_authors(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    first = seed(ana.data_dir, "api", "a1", ["ana early"], at_ms=T)[0]
    seed(ana.data_dir, "api", "a1", ["ana late"], at_ms=T + 10_000)
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    seed(bob.data_dir, "api", "b1", ["bob middle"], at_ms=T + 5_000)
    seed(bob.data_dir, "api", "b1", ["bob much later"], at_ms=T + 900_000)
    seed(bob.data_dir, "web", "b2", ["bob other project"], at_ms=T + 6_000)
    init(bob, team_lake, "api", "web", author="bob")
    bob.publish_json()

    out = ana.run("timeline", str(first), "--after", "1", "--team", "--json")

    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [(i["author"], i["title"]) for i in data["items"]] == [
        ("me", "ana early"),
        ("bob", "bob middle"),
        ("me", "ana late"),
    ]
    assert [i["is_anchor"] for i in data["items"]] == [True, False, False]


def test_timeline_team_without_team_settings_says_team_init(tmp_path: Path) -> None:
    solo = machine(tmp_path, "solo")
    first = seed(solo.data_dir, "api", "s1", ["x"])[0]

    out = solo.run("timeline", str(first), "--team")

    assert out.returncode == 1
    assert "workbench team init" in out.stderr
