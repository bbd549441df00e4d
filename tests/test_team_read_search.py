"""``workbench search --team``: the local store and the team lake together.

Real parts: the session's PostgreSQL as the DuckLake catalog, two authors' stores seeded with
the real ``Store`` API and published with ``workbench publish``, every search a real
``python -m workbench`` run (the service is down: the local half is the read-only full text).
The tests that only read share one module-scoped lake the two authors published to once
(``published``); those that forget or publish more build their own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Lake, Machine, forget, init, machine, published_lake, seed

pytestmark = pytest.mark.slow


def _search(m: Machine, *args: str) -> dict[str, Any]:
    out = m.run("search", "--team", "--json", *args)
    assert out.returncode == 0, out.stderr + out.stdout
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _two_authors(team_lake: Any, tmp_path: Path) -> tuple[Machine, Machine, list[int]]:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer for the api", "retry policy"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    bob_ids = seed(bob.data_dir, "api", "b1", ["cache eviction by ttl", "cache warmup secret"])
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    return ana, bob, bob_ids


@pytest.fixture(scope="module")
def published(
    postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Lake, Machine]:
    """A lake of its own with ana's and bob's publishes, and ana, for the tests that only read
    it (``published_lake``)."""
    lake, (ana, _, _) = published_lake(
        postgres_cluster, tmp_path_factory.mktemp("team-search"), _two_authors
    )
    return lake, ana


def test_local_wins_on_duplicates_and_every_hit_names_its_author(
    published: tuple[Lake, Machine],
) -> None:
    _, ana = published

    data = _search(ana, "cache")

    seen = [(h["author"], h["title"]) for h in data["observations"]]
    # ana's own published row is in the lake too, but shown once: as hers, from the local store
    assert sorted(seen) == [
        ("bob", "cache eviction by ttl"),
        ("bob", "cache warmup secret"),
        ("me", "cache layer for the api"),
    ]
    assert data["teamResults"] == 2
    assert isinstance(data["teamSnapshot"], int)


def test_text_output_has_an_author_column(published: tuple[Lake, Machine]) -> None:
    _, ana = published

    out = ana.run("search", "--team", "eviction")

    assert out.returncode == 0, out.stderr
    assert "author" in out.stdout
    assert "bob" in out.stdout
    assert "1 results" in out.stdout
    assert "ttl" in out.stdout


def test_a_tombstone_hides_a_colleagues_forgotten_row(team_lake: Any, tmp_path: Path) -> None:
    ana, bob, bob_ids = _two_authors(team_lake, tmp_path)
    forget(bob.data_dir, bob_ids[1])
    assert bob.publish_json()["tombstoned"] == 1

    titles = [h["title"] for h in _search(ana, "cache")["observations"]]

    assert "cache eviction by ttl" in titles
    assert "cache warmup secret" not in titles


def test_my_row_shows_from_the_lake_once_the_local_store_lost_it(
    published: tuple[Lake, Machine], tmp_path: Path
) -> None:
    team_lake, _ = published  # the laptop only reads the lake: it never publishes
    # a second machine of ana's: same author, an empty local store
    laptop = machine(tmp_path, "ana-laptop")
    seed(laptop.data_dir, "web", "l1", ["unrelated"])
    init(laptop, team_lake, "api", author="ana")

    hits = _search(laptop, "cache layer")["observations"]

    assert [(h["author"], h["title"]) for h in hits][:1] == [("ana", "cache layer for the api")]


def test_project_narrows_the_lake_too(published: tuple[Lake, Machine]) -> None:
    _, ana = published

    hits = _search(ana, "cache", "--project", "web")["observations"]

    assert hits == []


def test_search_team_without_team_settings_says_team_init(tmp_path: Path) -> None:
    solo = machine(tmp_path, "solo")
    seed(solo.data_dir, "api", "s1", ["cache"])

    out = solo.run("search", "--team", "cache")

    assert out.returncode == 1
    assert "workbench team init" in out.stderr


def test_the_local_filters_narrow_the_lake_too(team_lake: Any, tmp_path: Path) -> None:
    ana, _, _ = _two_authors(team_lake, tmp_path)
    cara = machine(tmp_path, "cara")
    seed(cara.data_dir, "api", "c1", ["cache from gemini"], platform="gemini-cli")
    init(cara, team_lake, "api", author="cara")
    cara.publish_json()

    on_gemini = _search(ana, "cache", "--platform", "gemini-cli")["observations"]
    in_2027 = _search(ana, "cache", "--since", "2027-01-01")["observations"]
    by_file = _search(ana, "cache", "--files", "src/nowhere")["observations"]

    assert [(h["author"], h["title"]) for h in on_gemini] == [("cara", "cache from gemini")]
    assert in_2027 == []
    assert by_file == []
