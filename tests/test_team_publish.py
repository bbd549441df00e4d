"""``workbench publish``: idempotent, incremental, allowlist-bound, forgets as tombstones.

Real parts: the session's PostgreSQL as the DuckLake catalog, a lake directory in tmp_path,
stores seeded with the real ``Store`` API, every command a real ``python -m workbench`` run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed

pytestmark = pytest.mark.slow


def _count(lake: Any, tmp: Path, table: str, where: str = "true") -> int:
    return lake.query(tmp, f"SELECT count(*) FROM lake.{table} WHERE {where}")[0][0]


def test_publish_twice_adds_nothing_the_second_time(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["cache layer", "retry policy"], summary="tidied the api")
    init(ana, team_lake, "api", author="ana")

    first = ana.publish_json()
    assert first["added"] == {"sessions": 1, "observations": 2, "summaries": 1}
    assert isinstance(first["snapshot"], int)
    second = ana.publish_json()
    assert second["added"] == {"sessions": 0, "observations": 0, "summaries": 0}
    assert second["snapshot"] is None  # nothing new: no empty snapshot either
    snapshots = team_lake.query(tmp_path, "SELECT max(snapshot_id) FROM lake.snapshots()")
    assert snapshots[0][0] == first["snapshot"]
    rows = team_lake.query(
        tmp_path,
        "SELECT author, project, platform_source, title, length(content_hash)"
        " FROM lake.observations ORDER BY local_id",
    )
    assert rows == [
        ("ana", "api", "claude-code", "cache layer", 64),
        ("ana", "api", "claude-code", "retry policy", 64),
    ]


def test_publish_is_incremental_by_high_water_mark(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["one", "two"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    seed(ana.data_dir, "api", "s1", ["three"], at_ms=1_780_000_100_000)

    run = ana.publish_json()

    assert run["added"]["observations"] == 1
    marks = team_lake.query(
        tmp_path,
        "SELECT table_name, max(mark) FROM lake.publish_marks"
        " WHERE author = 'ana' AND project = 'api' GROUP BY ALL ORDER BY 1",
    )
    assert dict(marks)["observations"] == 3  # the local id of "three"
    assert _count(team_lake, tmp_path, "observations") == 3


def test_since_narrows_a_run_and_never_skips_older_rows(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "old", ["from november"], at_ms=1_793_000_000_000)  # 2026-10-27
    seed(ana.data_dir, "api", "new", ["from december"], at_ms=1_796_000_000_000)  # 2026-12-01
    init(ana, team_lake, "api", author="ana")

    narrow = ana.publish_json("--since", "2026-11-15")
    assert narrow["added"]["observations"] == 1
    titles = team_lake.query(tmp_path, "SELECT title FROM lake.observations")
    assert titles == [("from december",)]
    assert _count(team_lake, tmp_path, "publish_marks") == 0

    full = ana.publish_json()
    assert full["added"]["observations"] == 1  # the older row, not skipped for good
    assert _count(team_lake, tmp_path, "observations") == 2


def test_bad_since_is_refused_with_the_accepted_form(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["x"])
    init(ana, team_lake, "api", author="ana")
    out = ana.run("publish", "--since", "last tuesday")
    assert out.returncode == 1
    assert "--since" in out.stderr
    assert "2026-12-01" in out.stderr


def test_allowlist_change_decides_what_is_published(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["api note"])
    seed(ana.data_dir, "web", "s2", ["web note"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    assert team_lake.query(tmp_path, "SELECT DISTINCT project FROM lake.observations") == [("api",)]

    assert ana.run("team", "allow", "web").returncode == 0
    assert ana.run("team", "deny", "api").returncode == 0
    seed(ana.data_dir, "api", "s1", ["api later"], at_ms=1_780_000_100_000)
    run = ana.publish_json()

    assert run["projects"] == ["web"]
    titles = sorted(r[0] for r in team_lake.query(tmp_path, "SELECT title FROM lake.observations"))
    assert titles == ["api note", "web note"]  # "api later" stayed home


def test_a_project_off_the_allowlist_is_refused_by_name(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "web", "s2", ["web note"])
    init(ana, team_lake, "api", author="ana")
    out = ana.run("publish", "--project", "web")
    assert out.returncode == 1
    assert "team allow web" in out.stderr
    assert _count(team_lake, tmp_path, "observations") == 0


def test_excluded_project_is_never_published_even_if_allowed(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["api note"])
    seed(ana.data_dir, "secret", "s2", ["secret note"])
    init(ana, team_lake, "api", "secret", author="ana")
    ana.env["WORKBENCH_EXCLUDED_PROJECTS"] = "sec*"  # a glob, as capture reads it
    run = ana.publish_json()
    assert run["projects"] == ["api"]
    assert team_lake.query(tmp_path, "SELECT DISTINCT project FROM lake.observations") == [("api",)]
    out = ana.run("publish", "--project", "secret")
    assert out.returncode == 1
    assert "matches excluded_projects" in out.stderr


def test_an_unreadable_exclusion_rule_publishes_nothing(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["api note"])
    init(ana, team_lake, "api", author="ana")
    settings_file = ana.data_dir / "settings.json"
    settings_file.write_text(settings_file.read_text().replace("{", '{"excluded_projects": 7,', 1))
    out = ana.run("publish")
    assert out.returncode == 1
    assert "nothing is published: capture paused" in out.stderr
    assert team_lake.query(tmp_path, "SELECT count(*) FROM lake.observations") == [(0,)]


def test_a_forget_propagates_as_a_tombstone(
    team_lake: Any, tmp_path: Path, make_service: Any
) -> None:
    ana = machine(tmp_path, "ana")
    data_dir = tmp_path / "data"  # make_service's data dir
    ana = type(ana)(data_dir=data_dir, env=ana.env | {"WORKBENCH_DATA_DIR": str(data_dir)})
    keep, gone = seed(data_dir, "api", "s1", ["keep me", "forget me"], narrative="wrong turn")
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()

    service = make_service()
    status, body = service.post("/api/observations/forget", {"ids": [gone]})
    assert status == 200, body
    service.stop()
    run = ana.publish_json()

    assert run["tombstoned"] == 1
    rows = team_lake.query(
        tmp_path,
        "SELECT local_id, title, narrative, facts, deleted_at_epoch IS NOT NULL"
        " FROM lake.observations ORDER BY local_id",
    )
    assert rows == [
        (keep, "keep me", "wrong turn", ["fact of keep me"], False),
        (gone, "", "", [], True),
    ]
    assert ana.publish_json()["tombstoned"] == 0  # applying it again changes nothing


def test_publish_without_team_settings_says_how_to_set_them(tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["x"])
    out = ana.run("publish")
    assert out.returncode == 1
    assert "workbench team init --catalog postgres://" in out.stderr


def test_summary_table_names_rows_added_and_the_snapshot(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["one", "two", "three"])
    init(ana, team_lake, "api", author="ana")
    out = ana.run("publish")
    assert out.returncode == 0, out.stderr
    assert "published as ana" in out.stdout
    assert re.search(r"snapshot\s+│\s+\d+", out.stdout)
    assert "observations" in out.stdout
    assert "3" in out.stdout


def test_progress_counts_every_row_read_against_the_total(team_lake: Any, tmp_path: Path) -> None:
    """The progress bar's feed: advances add up to the announced total (5000-row batches)."""
    from workbench.settings import load_settings
    from workbench.team.publish import publish

    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", [f"note {i}" for i in range(5200)], summary="done")
    init(ana, team_lake, "api", author="ana")
    calls: list[tuple[str, int, int]] = []

    result = publish(load_settings(ana.data_dir), progress=lambda *c: calls.append(c))

    assert result.added == {"sessions": 1, "observations": 5200, "summaries": 1}
    totals = {total for _, _, total in calls}
    assert totals == {5202}
    assert sum(step for _, step, _ in calls) == 5202
    assert [step for what, step, _ in calls if what == "observations"] == [5000, 200]
