"""A team read pins one snapshot: a publisher committing meanwhile never shows through.

Real parts: the session's PostgreSQL as the DuckLake catalog; the reader is the library every
``--team`` command uses (``workbench.team.read``), the writer a real ``workbench publish`` run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed

pytestmark = pytest.mark.slow


def test_a_reader_keeps_its_snapshot_while_a_writer_publishes(
    team_lake: Any, tmp_path: Path
) -> None:
    from workbench.settings import load_settings
    from workbench.team import read

    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    seed(bob.data_dir, "api", "b1", ["cache eviction", "cache warmup"])
    init(bob, team_lake, "api", author="bob")

    reader = read.reader(load_settings(ana.data_dir))
    try:
        first = read.search_observations(reader, "cache")
        published = bob.publish_json()  # commits while the reader is open
        again = read.search_observations(reader, "cache")
        tables = read.team_tables(reader)
    finally:
        reader.close()
    fresh = read.reader(load_settings(ana.data_dir))
    try:
        now = read.search_observations(fresh, "cache")
    finally:
        fresh.close()

    assert published["added"]["observations"] == 2
    assert published["snapshot"] > reader.snapshot
    assert [r["author"] for r in first] == ["ana"]
    assert again == first
    assert tables["team_observations"].num_rows == 1
    assert fresh.snapshot == published["snapshot"]
    assert sorted(r["author"] for r in now) == ["ana", "bob", "bob"]
