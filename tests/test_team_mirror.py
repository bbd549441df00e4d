"""The team mirror: ``search --team`` reads a local FTS5 copy of the lake, kept current.

Real parts: the session's PostgreSQL as the DuckLake catalog, stores seeded with the real
``Store`` API and published with ``workbench publish``, every search and refresh a real
``python -m workbench`` run. "The lake is down" is the catalog database renamed away in
PostgreSQL (connections then fail as for a server gone), and renamed back after.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Lake, Machine, forget, init, machine, seed

pytestmark = pytest.mark.slow


def _search(m: Machine, *args: str) -> dict[str, Any]:
    out = m.run("search", "--team", "--json", *args)
    assert out.returncode == 0, out.stderr + out.stdout
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _refresh(m: Machine, *args: str) -> dict[str, Any]:
    out = m.run("team", "refresh", "--json", *args)
    assert out.returncode == 0, out.stderr + out.stdout
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _team(team_lake: Lake, tmp_path: Path) -> tuple[Machine, Machine, list[int]]:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["retry policy"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    bob_ids = seed(
        bob.data_dir,
        "api",
        "b1",
        ["cache eviction by ttl", "ReviewBuildWorker flakes", "unrelated note"],
        narrative="plain words",
    )
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    return ana, bob, bob_ids


def _lake_snapshot(team_lake: Lake, tmp: Path) -> int:
    return int(team_lake.query(tmp, "SELECT max(snapshot_id) FROM lake.snapshots()")[0][0])


def test_team_search_is_stemmed_bm25_from_the_mirror(team_lake: Lake, tmp_path: Path) -> None:
    ana, _, _ = _team(team_lake, tmp_path)

    caching = _search(ana, "caching")  # porter: caching ~ cache (a substring scan misses it)
    worker = _search(ana, "build worker")  # CamelCase parts, as in the local index

    assert [(h["author"], h["title"]) for h in caching["observations"]] == [
        ("bob", "cache eviction by ttl")
    ]
    assert [h["title"] for h in worker["observations"]] == ["ReviewBuildWorker flakes"]
    assert caching["teamSnapshot"] == _lake_snapshot(team_lake, tmp_path)
    mirror = ana.data_dir / "team" / "mirror.sqlite"
    with sqlite3.connect(mirror) as conn:
        held = conn.execute("SELECT count(*) FROM observations").fetchone()[0]
    assert held == 4  # ana's one and bob's three live rows


def test_refresh_applies_new_rows_and_tombstones_incrementally(
    team_lake: Lake, tmp_path: Path
) -> None:
    ana, bob, bob_ids = _team(team_lake, tmp_path)
    first = _refresh(ana)
    seed(bob.data_dir, "api", "b2", ["cache warmup"], at_ms=1_780_000_100_000)
    forget(bob.data_dir, bob_ids[0])
    bob.publish_json()

    second = _refresh(ana)
    third = _refresh(ana)
    titles = [h["title"] for h in _search(ana, "cache")["observations"]]

    assert first["mode"] == "rebuild"
    assert (second["mode"], second["added"], second["removed"]) == ("incremental", 1, 1)
    assert second["snapshot"] == _lake_snapshot(team_lake, tmp_path)
    assert third["mode"] == "current"
    assert titles == ["cache warmup"]


def test_rebuild_gives_the_same_rows_as_incremental(team_lake: Lake, tmp_path: Path) -> None:
    ana, bob, bob_ids = _team(team_lake, tmp_path)
    _refresh(ana)
    forget(bob.data_dir, bob_ids[1])
    bob.publish_json()
    _refresh(ana)
    mirror = ana.data_dir / "team" / "mirror.sqlite"

    def rows() -> list[tuple[Any, ...]]:
        with sqlite3.connect(mirror) as conn:
            return conn.execute(
                "SELECT author, local_id, title FROM observations ORDER BY author, local_id"
            ).fetchall()

    incremental = rows()
    rebuilt = _refresh(ana, "--rebuild")

    assert rebuilt["mode"] == "rebuild"
    assert rows() == incremental
    assert [t for _, _, t in incremental] == [
        "retry policy",
        "cache eviction by ttl",
        "unrelated note",
    ]


def test_a_lake_that_does_not_answer_leaves_the_last_mirror_serving(
    team_lake: Lake, tmp_path: Path
) -> None:
    ana, _, _ = _team(team_lake, tmp_path)
    ana.env["WORKBENCH_TEAM_MIRROR_MAX_AGE_S"] = "0"  # ask the lake on every search
    snapshot = _refresh(ana)["snapshot"]
    cluster, name = team_lake.cluster, team_lake.database
    cluster.psql(f'ALTER DATABASE "{name}" RENAME TO "{name}_away"')
    try:
        data = _search(ana, "eviction")
        refreshed = ana.run("team", "refresh")
    finally:
        cluster.psql(f'ALTER DATABASE "{name}_away" RENAME TO "{name}"')

    assert [h["title"] for h in data["observations"]] == ["cache eviction by ttl"]
    assert data["teamSnapshot"] == snapshot
    assert "could not be read" in data["teamStale"]
    assert refreshed.returncode == 1
    assert "NOT refreshed" in refreshed.stdout


def test_no_mirror_and_no_lake_is_a_clear_error(team_lake: Lake, tmp_path: Path) -> None:
    ana, _, _ = _team(team_lake, tmp_path)
    cluster, name = team_lake.cluster, team_lake.database
    cluster.psql(f'ALTER DATABASE "{name}" RENAME TO "{name}_away"')
    try:
        out = ana.run("search", "--team", "eviction")
    finally:
        cluster.psql(f'ALTER DATABASE "{name}_away" RENAME TO "{name}"')

    assert out.returncode == 1
    assert "no team mirror yet" in out.stderr


def test_a_recently_checked_mirror_answers_without_asking_the_lake(
    team_lake: Lake, tmp_path: Path
) -> None:
    ana, _, _ = _team(team_lake, tmp_path)
    ana.env["WORKBENCH_TEAM_MIRROR_MAX_AGE_S"] = "3600"
    snapshot = _refresh(ana)["snapshot"]
    cluster, name = team_lake.cluster, team_lake.database
    cluster.psql(f'ALTER DATABASE "{name}" RENAME TO "{name}_away"')
    try:
        data = _search(ana, "eviction")
    finally:
        cluster.psql(f'ALTER DATABASE "{name}_away" RENAME TO "{name}"')

    assert [h["title"] for h in data["observations"]] == ["cache eviction by ttl"]
    assert data["teamSnapshot"] == snapshot
    assert "teamStale" not in data  # the lake was not asked: nothing failed


def test_a_mirror_another_process_is_writing_is_served_as_it_is(
    team_lake: Lake, tmp_path: Path
) -> None:
    ana, _, _ = _team(team_lake, tmp_path)
    ana.env["WORKBENCH_TEAM_MIRROR_MAX_AGE_S"] = "0"
    snapshot = _refresh(ana)["snapshot"]
    writer = sqlite3.connect(ana.data_dir / "team" / "mirror.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # as a long rebuild in another process holds it
    try:
        data = _search(ana, "eviction")
    finally:
        writer.execute("ROLLBACK")
        writer.close()

    assert [h["title"] for h in data["observations"]] == ["cache eviction by ttl"]
    assert data["teamSnapshot"] == snapshot
    assert "another process is refreshing" in data["teamStale"]
