"""``workbench stats --team``: economics, types and activity over your store and the lake.

Real parts: the session's PostgreSQL as the DuckLake catalog, two authors publishing with
``workbench publish``, every statistic a real ``python -m workbench stats`` run. The tests
that only read share one module-scoped lake the two authors published to once
(``published``); the one that forgets and publishes again builds its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Machine, forget, init, machine, published_lake, seed

pytestmark = pytest.mark.slow


def _stats(m: Machine, *args: str) -> dict[str, Any]:
    out = m.run("stats", *args, "--team", "--json")
    assert out.returncode == 0, out.stderr + out.stdout
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _two_authors(team_lake: Any, tmp_path: Path) -> tuple[Machine, Machine, list[int]]:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer", "retry policy"], summary="tidied")
    seed(ana.data_dir, "web", "a2", ["private project row"])  # not on the allowlist
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    bob_ids = seed(bob.data_dir, "api", "b1", ["eviction", "warmup", "ttl"], summary="cached")
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    return ana, bob, bob_ids


@pytest.fixture(scope="module")
def published(postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Machine:
    """ana, after ana and bob published to a lake of their own, for the tests that only read
    it (``published_lake``)."""
    _, (ana, _, _) = published_lake(
        postgres_cluster, tmp_path_factory.mktemp("team-stats"), _two_authors
    )
    return ana


def test_types_counts_local_rows_once_and_the_colleagues_rows(published: Machine) -> None:
    ana = published

    data = _stats(ana, "types")

    # ana: 3 local (2 published, counted once) + bob: 3
    assert data["summary"]["observations"] == 6


def test_activity_by_project_counts_team_sessions_and_summaries(published: Machine) -> None:
    ana = published

    data = _stats(ana, "activity", "--by", "project")

    rows = {r["project"]: r for r in data["items"]}
    assert rows["api"]["sessions"] == 2
    assert rows["api"]["observations"] == 5
    assert rows["api"]["summaries"] == 2
    assert rows["web"]["observations"] == 1


def test_economics_drops_a_forgotten_row_of_a_colleague(team_lake: Any, tmp_path: Path) -> None:
    ana, bob, bob_ids = _two_authors(team_lake, tmp_path)
    before = _stats(ana, "economics", "--project", "api")["summary"]["observations"]
    forget(bob.data_dir, bob_ids[0])
    bob.publish_json()

    after = _stats(ana, "economics", "--project", "api")["summary"]["observations"]

    assert (before, after) == (5, 4)


def test_stats_team_refuses_a_statistic_it_cannot_compute(published: Machine) -> None:
    ana = published

    out = ana.run("stats", "roi", "--team")

    assert out.returncode == 1
    assert "economics, types, activity" in out.stderr


def test_stats_team_without_team_settings_says_team_init(tmp_path: Path) -> None:
    solo = machine(tmp_path, "solo")
    seed(solo.data_dir, "api", "s1", ["x"])

    out = solo.run("stats", "types", "--team")

    assert out.returncode == 1
    assert "workbench team init" in out.stderr
