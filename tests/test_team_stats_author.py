"""``workbench stats --team --by author``: economics, types and activity per author.

Real parts: the session's PostgreSQL as the DuckLake catalog, ana and bob publishing with
``workbench publish``, every statistic a real ``python -m workbench stats`` run. ana's own
rows count once, as ``me`` (local wins over her published copies).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Machine, init, machine, seed

pytestmark = pytest.mark.slow


@pytest.fixture
def ana(team_lake: Any, tmp_path: Path) -> Machine:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer", "retry policy"], summary="tidied")
    seed(ana.data_dir, "web", "a2", ["private project row"])  # not on the allowlist
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    seed(bob.data_dir, "api", "b1", ["eviction", "warmup", "ttl", "ttl again"], summary="cached")
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    return ana


def _stats(m: Machine, *args: str) -> dict[str, Any]:
    out = m.run("stats", *args, "--team", "--by", "author", "--json")
    assert out.returncode == 0, out.stderr + out.stdout
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_economics_types_and_activity_split_by_author(ana: Machine) -> None:
    economics = _stats(ana, "economics")
    types = _stats(ana, "types")
    activity = _stats(ana, "activity")

    assert {r["author"]: r["observations"] for r in economics["items"]} == {"me": 3, "bob": 4}
    assert economics["summary"]["observations"] == 7
    per_author = {(r["author"], r["type"]): r for r in types["items"]}
    assert {k: r["observations"] for k, r in per_author.items()} == {
        ("bob", "discovery"): 4,
        ("me", "discovery"): 3,
    }
    assert {r["share_pct"] for r in types["items"]} == {100.0}
    assert types["summary"] == {"observations": 7, "types": 1, "authors": 2}
    rows = {r["author"]: r for r in activity["items"]}
    assert (rows["me"]["sessions"], rows["me"]["observations"], rows["me"]["summaries"]) == (
        2,
        3,
        1,
    )
    assert (rows["bob"]["sessions"], rows["bob"]["prompts"], rows["bob"]["summaries"]) == (
        1,
        0,
        1,
    )


def test_the_table_has_an_author_column(ana: Machine) -> None:
    out = ana.run("stats", "economics", "--team", "--by", "author")

    assert out.returncode == 0, out.stderr
    assert "author" in out.stdout
    assert "bob" in out.stdout
    assert "economics by author" in out.stdout


def test_other_by_values_are_refused_with_the_list(ana: Machine) -> None:
    colour = ana.run("stats", "economics", "--team", "--by", "colour")
    types_by_day = ana.run("stats", "types", "--team", "--by", "day")
    alone = ana.run("stats", "activity", "--by", "author")

    assert colour.returncode == 1
    assert "project, type, day, platform_source, author" in colour.stderr
    assert types_by_day.returncode == 1
    assert "use one of author" in types_by_day.stderr
    assert alone.returncode == 1
    assert "stats --team" in alone.stderr
