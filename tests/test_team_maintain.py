"""``workbench team maintain``: expire old snapshots, compact, delete dead files.

Real parts: the session's PostgreSQL as the catalog, a data directory in tmp_path whose
Parquet files are counted and scanned byte by byte, stores written with the real ``Store``
API, publishes through the real ``publish`` (set-up), and every command under test a real
``python -m workbench`` run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Machine, forget, init, machine, seed
from workbench.settings import load_settings
from workbench.team.publish import publish

pytestmark = pytest.mark.slow

MARKER = "FORGOTTEN-4b1d-KEY-rotation-notes"


def _maintain(m: Machine, *args: str) -> dict[str, Any]:
    out = m.run("team", "maintain", "--json", *args)
    assert out.returncode == 0, out.stderr + out.stdout
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def _team_rows(m: Machine) -> list[dict[str, Any]]:
    out = m.run(
        "sql",
        "--json",
        "--team",
        "SELECT author, title, narrative FROM team_observations ORDER BY title",
    )
    assert out.returncode == 0, out.stderr + out.stdout
    rows: list[dict[str, Any]] = json.loads(out.stdout)
    return rows


def _files_holding(lake: Any, text: str) -> list[Path]:
    return [p for p in lake.parquet_files() if text.encode() in p.read_bytes()]


def _many_small_publishes(team_lake: Any, tmp_path: Path, count: int) -> Machine:
    ana = machine(tmp_path, "ana")
    init(ana, team_lake, "api", author="ana")
    for i in range(count):
        seed(ana.data_dir, "api", f"s{i}", [f"note {i:02d}"], at_ms=1_780_000_000_000 + i)
        assert publish(load_settings(ana.data_dir)).snapshot is not None
    return ana


def test_maintain_compacts_many_small_publishes_and_the_views_keep_their_rows(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = _many_small_publishes(team_lake, tmp_path, 20)
    before_files = team_lake.parquet_files()
    before_rows = _team_rows(ana)
    assert len(before_rows) == 20

    report = _maintain(ana, "--older-than", "0s")

    after_files = team_lake.parquet_files()
    assert len(after_files) < len(before_files) / 4  # 20 publishes x 2 tables: a few files now
    assert report["parquetBefore"]["files"] == len(before_files)
    assert report["parquetAfter"]["files"] == len(after_files)
    assert report["mergedFiles"] > report["mergedInto"] > 0
    assert report["expiredSnapshots"]
    assert _team_rows(ana) == before_rows
    assert ana.publish_json()["snapshot"] is None  # the marks survived: nothing re-published


def test_a_forgotten_observations_text_is_in_no_file_after_maintain(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["kept"])
    (forgotten,) = seed(ana.data_dir, "api", "s1", ["rotated keys"], narrative=MARKER, at_ms=1)
    init(ana, team_lake, "api", author="ana")
    first = ana.publish_json()["snapshot"]
    forget(ana.data_dir, forgotten)
    assert ana.publish_json()["tombstoned"] == 1
    assert _files_holding(team_lake, MARKER)  # the privacy gap: older snapshots' files keep it

    report = _maintain(ana, "--older-than", "0s")

    assert _files_holding(team_lake, MARKER) == []
    assert first in report["expiredSnapshots"]
    assert [r["title"] for r in _team_rows(ana)] == ["kept"]
    oldest = report["oldestSnapshot"]
    travel = ana.run("sql", "--team", "--at-snapshot", str(first), "SELECT 1")
    assert travel.returncode == 1
    assert f"no snapshot {first}" in travel.stderr
    assert f"snapshots {oldest} to" in travel.stderr  # names the oldest one still there


def test_dry_run_lists_what_would_go_and_changes_nothing(team_lake: Any, tmp_path: Path) -> None:
    ana = _many_small_publishes(team_lake, tmp_path, 3)
    files = {p: p.stat().st_size for p in team_lake.parquet_files()}
    snapshots = team_lake.query(tmp_path, "SELECT snapshot_id FROM lake.snapshots() ORDER BY 1")

    report = _maintain(ana, "--older-than", "0s", "--dry-run")

    assert report["dryRun"] is True
    assert report["expiredSnapshots"]  # listed, not expired
    assert {p: p.stat().st_size for p in team_lake.parquet_files()} == files
    assert team_lake.query(tmp_path, "SELECT snapshot_id FROM lake.snapshots() ORDER BY 1") == (
        snapshots
    )


def test_the_default_retention_keeps_recent_snapshots_and_the_table_says_what_was_done(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = _many_small_publishes(team_lake, tmp_path, 2)
    snapshots = team_lake.query(tmp_path, "SELECT count(*) FROM lake.snapshots()")

    out = ana.run("team", "maintain")

    assert out.returncode == 0, out.stderr + out.stdout
    assert "team lake maintenance" in out.stdout
    assert "snapshots expired (older than 7d)" in out.stdout
    assert "small files merged" in out.stdout
    assert team_lake.query(tmp_path, "SELECT count(*) FROM lake.snapshots()") >= snapshots


def test_a_malformed_duration_is_refused_with_how_to_write_one(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    init(ana, team_lake, "api", author="ana")

    out = ana.run("team", "maintain", "--older-than", "a week")

    assert out.returncode != 0
    assert "0s, 30s, 15m, 12h, 7d, 2w" in out.stderr
    bad = ana.run("team", "status", timeout=60)
    assert bad.returncode == 0  # nothing was written by the refused call
    env = {**ana.env, "WORKBENCH_TEAM_SNAPSHOT_RETENTION": "forever"}
    refused = Machine(ana.data_dir, env).run("team", "maintain")
    assert refused.returncode != 0
    assert "team_snapshot_retention" in refused.stderr
