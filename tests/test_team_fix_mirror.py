"""The team mirror after a colleague forgets, and when the data path fails mid-refresh
(review of issue 12, defects 5 and 7).

- A forgotten observation's words leave ``mirror.sqlite`` itself, not only its rows: FTS5
  keeps a removed row's terms in its index segments until they are merged, and freed pages
  keep old bytes unless ``secure_delete`` is on.
- The catalog answers but the Parquet files cannot be read: the search serves the mirror as
  it was and says it is stale; with no mirror yet it is a clear error, never a traceback.

Real parts: the session's PostgreSQL as the catalog, ``workbench publish`` / ``search --team``
/ ``team refresh`` as CLI runs, the data directory moved away for real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import forget, init, machine, seed

pytestmark = pytest.mark.slow


def test_a_forgotten_observations_words_leave_the_mirror_file(
    team_lake: Any, tmp_path: Path
) -> None:
    from workbench.settings import load_settings

    ana, bob = machine(tmp_path, "ana"), machine(tmp_path, "bob")
    seed(ana.data_dir, "api", "a1", ["ana thing"])
    init(ana, team_lake, "api", author="ana")
    ids = seed(bob.data_dir, "api", "b1", ["QXMARKERTITLE zebra"], narrative="QXMARKERNARR")
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    assert ana.run("team", "refresh").returncode == 0
    mirror_file = load_settings(ana.data_dir).team_mirror_path
    assert b"QXMARKERNARR" in mirror_file.read_bytes()  # the test can see the bytes

    forget(bob.data_dir, ids[0])
    bob.publish_json()
    refreshed = ana.run("team", "refresh")

    assert refreshed.returncode == 0, refreshed.stderr
    raw = mirror_file.read_bytes()
    for marker in (b"QXMARKERNARR", b"QXMARKERTITLE", b"qxmarkertitl", b"zebra"):
        assert marker not in raw, marker


def _bob_published(team_lake: Any, tmp_path: Path) -> Any:
    ana, bob = machine(tmp_path, "ana"), machine(tmp_path, "bob")
    seed(bob.data_dir, "api", "b1", ["bob note"])
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    seed(ana.data_dir, "api", "a1", ["ana thing"])
    init(ana, team_lake, "api", author="ana")
    return ana, bob


def test_data_path_gone_with_a_mirror_serves_it_stale(team_lake: Any, tmp_path: Path) -> None:
    ana, bob = _bob_published(team_lake, tmp_path)
    ana.env["WORKBENCH_TEAM_MIRROR_MAX_AGE_S"] = "0"  # every search asks the lake
    assert ana.run("team", "refresh").returncode == 0
    seed(bob.data_dir, "api", "b2", ["bob later"], at_ms=1_780_000_100_000)
    bob.publish_json()  # the mirror is now behind: the refresh reads the change feed
    team_lake.data.rename(team_lake.data.with_name("lake.away"))

    out = ana.run("search", "--team", "--json", "bob")

    assert out.returncode == 0, out.stderr + out.stdout
    body = json.loads(out.stdout)
    assert "team lake could not be read" in body["teamStale"]
    assert [h["title"] for h in body["observations"]] == ["bob note"]


def test_data_path_gone_without_a_mirror_is_a_clear_error(team_lake: Any, tmp_path: Path) -> None:
    ana, _ = _bob_published(team_lake, tmp_path)
    team_lake.data.rename(team_lake.data.with_name("lake.away"))

    out = ana.run("search", "--team", "--json", "bob")

    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert "team data path" in out.stderr + out.stdout
