"""Two machines of one author publish side by side: neither blanks, deletes or skips the
other's rows (review of issue 12, defect 2).

Both machines number their rows from 1, so an author's ``local_id`` names a row only together
with the machine that published it. Each data dir has a ``machine_id`` of its own
(``workbench/team/machine.py``), published on every row; marks, supersedes and tombstones are
per (author, machine).

Real parts: the session's PostgreSQL as the catalog, stores written with the real ``Store``
API, ``workbench publish`` as a real CLI run, lake reads through our own DuckDB reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import init, machine, seed
from workbench.models import SummaryDraft

pytestmark = pytest.mark.slow


def _observations(team_lake: Any, tmp_path: Path) -> list[tuple[Any, ...]]:
    return team_lake.query(
        tmp_path,
        "SELECT title, deleted_at_epoch IS NULL FROM lake.observations"
        " WHERE author = 'ana' ORDER BY title",
    )


def test_a_second_machine_of_the_same_author_publishes_all_its_rows_and_keeps_them(
    team_lake: Any, tmp_path: Path
) -> None:
    laptop, desktop = machine(tmp_path, "laptop"), machine(tmp_path, "desktop")
    seed(laptop.data_dir, "api", "a1", [f"laptop note {i}" for i in range(3)])
    seed(desktop.data_dir, "api", "b1", [f"desktop note {i}" for i in range(6)])
    init(laptop, team_lake, "api", author="ana")
    init(desktop, team_lake, "api", author="ana")

    assert laptop.publish_json()["added"]["observations"] == 3
    # The desktop's rows 1..3 are past no mark of its own: all six are published.
    assert desktop.publish_json()["added"]["observations"] == 6
    seed(laptop.data_dir, "api", "a1", ["laptop later"], at_ms=1_780_000_500_000)
    again = laptop.publish_json()

    assert again["added"]["observations"] == 1
    assert again["superseded"] == 0
    assert again["tombstoned"] == 0
    titles = [f"desktop note {i}" for i in range(6)] + ["laptop later"]
    titles += [f"laptop note {i}" for i in range(3)]
    assert _observations(team_lake, tmp_path) == [(t, True) for t in sorted(titles)]
    machines = team_lake.query(
        tmp_path, "SELECT count(DISTINCT machine_id), count(machine_id) FROM lake.observations"
    )
    assert machines == [(2, 10)]


def test_a_summary_rewritten_on_one_machine_leaves_the_other_machines_summary(
    team_lake: Any, tmp_path: Path
) -> None:
    from workbench.store import summaries
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    laptop, desktop = machine(tmp_path, "laptop"), machine(tmp_path, "desktop")
    seed(laptop.data_dir, "api", "a1", ["laptop note"], summary="laptop draft")
    seed(desktop.data_dir, "api", "b1", ["desktop note"], summary="desktop summary")
    init(laptop, team_lake, "api", author="ana")
    init(desktop, team_lake, "api", author="ana")
    laptop.publish_json()
    desktop.publish_json()

    with Store(laptop.data_dir / "workbench.db") as store, atomic(store.conn):
        summaries.upsert(
            store.conn,
            SummaryDraft(request="laptop final", learned="laptop final"),
            content_session_id="a1",
            project="api",
            prompt_number=1,
            created_ms=1_780_000_000_000,
        )
    again = laptop.publish_json()

    assert again["superseded"] == 1
    requests = team_lake.query(tmp_path, "SELECT request FROM lake.summaries ORDER BY 1")
    assert requests == [("desktop summary",), ("laptop final",)]


def test_a_lake_made_before_machine_ids_gets_the_column_when_opened(
    team_lake: Any, tmp_path: Path
) -> None:
    from workbench.team import lake

    settings = team_lake.settings(tmp_path)
    con = lake.connect(settings, create_tables=False)
    try:  # the tables as the first release of the lake made them: no machine_id
        for table, columns in lake.TABLES.items():
            con.execute(f"CREATE TABLE lake.{table} ({columns})")
        assert "machine_id" not in lake.TABLES["observations"]
    finally:
        con.close()
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer"])
    init(ana, team_lake, "api", author="ana")  # opens the lake: the upgrade

    assert ana.publish_json()["added"]["observations"] == 1
    for table in lake.TABLES:
        rows = team_lake.query(
            tmp_path,
            "SELECT count(*) FROM duckdb_columns() WHERE database_name = 'lake'"
            " AND table_name = ? AND column_name = 'machine_id'",
            [table],
        )
        assert rows == [(1,)], table


def test_rows_published_before_machine_ids_are_not_published_again(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer", "retry policy"], summary="tidied")
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    from workbench.team import lake

    con = lake.connect(team_lake.settings(tmp_path))
    try:  # what a publish before machine ids left: no machine on rows or marks
        for table in lake.TABLES:
            con.execute(f"UPDATE lake.{table} SET machine_id = NULL")
    finally:
        con.close()

    again = ana.publish_json()

    assert again["added"] == {"sessions": 0, "observations": 0, "summaries": 0}
    assert again["superseded"] == 0
    assert _observations(team_lake, tmp_path) == [("cache layer", True), ("retry policy", True)]


def test_a_store_restored_into_a_new_data_dir_publishes_nothing_twice(
    team_lake: Any, tmp_path: Path
) -> None:
    import shutil

    old = machine(tmp_path, "old")
    seed(old.data_dir, "api", "a1", ["cache layer", "retry policy"], summary="tidied")
    init(old, team_lake, "api", author="ana")
    old.publish_json()
    new = machine(tmp_path, "new")
    shutil.copy(old.data_dir / "workbench.db", new.data_dir / "workbench.db")
    init(new, team_lake, "api", author="ana")

    again = new.publish_json()

    assert again["added"] == {"sessions": 0, "observations": 0, "summaries": 0}
    assert again["superseded"] == 0
    assert _observations(team_lake, tmp_path) == [("cache layer", True), ("retry policy", True)]
