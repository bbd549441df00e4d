"""``workbench sql --team [--at-snapshot N]``: the lake's tables next to the local views.

Real parts: the session's PostgreSQL as the DuckLake catalog, two authors publishing with
``workbench publish``, every query a real ``python -m workbench sql`` run. The tests that
only read share one module-scoped lake the two authors published to once (``published``);
the one that forgets and publishes again builds its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Lake, Machine, forget, init, machine, published_lake, seed

pytestmark = pytest.mark.slow


def _sql(m: Machine, *args: str) -> list[dict[str, Any]]:
    out = m.run("sql", "--json", *args)
    assert out.returncode == 0, out.stderr + out.stdout
    rows: list[dict[str, Any]] = json.loads(out.stdout)
    return rows


def _two_authors(team_lake: Any, tmp_path: Path) -> tuple[Machine, Machine, list[int], int]:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer", "retry policy"], summary="tidied")
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    bob_ids = seed(bob.data_dir, "api", "b1", ["eviction", "warmup"])
    init(bob, team_lake, "api", author="bob")
    snapshot = bob.publish_json()["snapshot"]
    return ana, bob, bob_ids, snapshot


Published = tuple[Lake, Machine, int]


@pytest.fixture(scope="module")
def published(postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """A lake of its own with ana's and bob's publishes, for the tests that only read it
    (``published_lake``)."""
    lake, (ana, _, _, snapshot) = published_lake(
        postgres_cluster, tmp_path_factory.mktemp("team-sql"), _two_authors
    )
    return lake, ana, snapshot


def test_team_views_sit_next_to_the_local_ones(published: Published) -> None:
    _, ana, _ = published

    rows = _sql(
        ana,
        "--team",
        "SELECT author, count(*) AS n FROM team_observations GROUP BY ALL ORDER BY author",
    )
    local = _sql(ana, "--team", "SELECT count(*) AS n FROM observations")
    sessions = _sql(
        ana, "--team", "SELECT author, content_session_id FROM team_sessions ORDER BY 1"
    )
    summaries = _sql(ana, "--team", "SELECT author, learned FROM team_summaries")

    assert rows == [{"author": "ana", "n": 2}, {"author": "bob", "n": 2}]
    assert local == [{"n": 2}]
    assert sessions == [
        {"author": "ana", "content_session_id": "a1"},
        {"author": "bob", "content_session_id": "b1"},
    ]
    assert summaries == [{"author": "ana", "learned": "tidied"}]


def test_a_tombstoned_row_never_appears_and_time_travel_still_has_it(
    team_lake: Any, tmp_path: Path
) -> None:
    ana, bob, bob_ids, before = _two_authors(team_lake, tmp_path)
    forget(bob.data_dir, bob_ids[1])
    after = bob.publish_json()["snapshot"]
    assert after > before

    now = _sql(ana, "--team", "SELECT title FROM team_observations WHERE author = 'bob'")
    then = _sql(
        ana,
        "--team",
        "--at-snapshot",
        str(before),
        "SELECT title FROM team_observations WHERE author = 'bob' ORDER BY title",
    )

    assert now == [{"title": "eviction"}]
    assert then == [{"title": "eviction"}, {"title": "warmup"}]


def test_an_earlier_snapshot_has_only_what_was_published_by_then(published: Published) -> None:
    _, ana, latest = published
    first = latest - 1  # ana's run; bob's came next

    rows = _sql(
        ana, "--team", "--at-snapshot", str(first), "SELECT DISTINCT author FROM team_observations"
    )

    assert rows == [{"author": "ana"}]


def test_an_unknown_snapshot_is_refused_with_the_range(published: Published) -> None:
    _, ana, latest = published

    out = ana.run("sql", "--team", "--at-snapshot", "9999", "SELECT 1")

    assert out.returncode == 1
    assert "no snapshot 9999" in out.stderr
    assert f"to {latest}" in out.stderr


def test_at_snapshot_needs_team(tmp_path: Path) -> None:
    solo = machine(tmp_path, "solo")
    seed(solo.data_dir, "api", "s1", ["x"])

    out = solo.run("sql", "--at-snapshot", "1", "SELECT 1")

    assert out.returncode == 1
    assert "add --team" in out.stderr


def test_sql_team_without_team_settings_says_team_init(tmp_path: Path) -> None:
    solo = machine(tmp_path, "solo")
    seed(solo.data_dir, "api", "s1", ["x"])

    out = solo.run("sql", "--team", "SELECT 1")

    assert out.returncode == 1
    assert "workbench team init" in out.stderr


def test_the_sandbox_still_refuses_writes_and_the_lake_itself(
    published: Published, tmp_path: Path
) -> None:
    team_lake, ana, _ = published

    for query in (
        "DELETE FROM team_observations",
        "SELECT * FROM lake.observations",
        f"ATTACH 'ducklake:postgres:{team_lake.dsn}' AS l2",
        f"SELECT * FROM read_parquet('{team_lake.data}/**/*.parquet')",
    ):
        out = ana.run("sql", "--team", query)
        assert out.returncode == 1, query
        assert "workbench sql" in out.stderr, (query, out.stderr)
    rows = team_lake.query(tmp_path, "SELECT count(*) FROM lake.observations")
    assert rows == [(4,)]
