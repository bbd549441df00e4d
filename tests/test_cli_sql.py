"""``workbench sql`` and ``workbench stats`` as real subprocesses over a real store.

The store is written with the store API (``tests/analytics_data.py``) and closed; the CLI then
reads it without any service, the way a person runs it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests import analytics_data
from tests.conftest import ROOT, base_env, free_port

DB_NAME = "workbench.db"


@pytest.fixture
def seeded(data_dir: Path) -> Path:
    analytics_data.seed(data_dir / DB_NAME).close()
    return data_dir


def workbench(
    data_dir: Path, *args: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args, "--data-dir", str(data_dir)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**base_env(data_dir, free_port()), "COLUMNS": "200", **env},
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


GROUP_BY = "SELECT project, type, count(*) AS n FROM observations GROUP BY ALL ORDER BY ALL"
GROUPED = [
    {"project": "alpha", "type": "bugfix", "n": 1},
    {"project": "alpha", "type": "feature", "n": 1},
    {"project": "beta", "type": "feature", "n": 1},
]


# ----- output formats -------------------------------------------------------------------------
def test_sql_prints_a_table_by_default(seeded: Path) -> None:
    proc = workbench(seeded, "sql", GROUP_BY)
    assert proc.returncode == 0, proc.stderr
    assert "3 rows" in proc.stdout
    lines = [line for line in proc.stdout.splitlines() if "alpha" in line or "beta" in line]
    assert len(lines) == 3
    assert "bugfix" in lines[0]
    assert "feature" in lines[2]


def test_sql_json(seeded: Path) -> None:
    proc = workbench(seeded, "sql", GROUP_BY, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == GROUPED
    lists = workbench(
        seeded,
        "sql",
        "SELECT id, concepts, created_ts, day FROM observations ORDER BY id",
        "--json",
    )
    first = json.loads(lists.stdout)[0]
    assert first == {
        "id": 1,
        "concepts": ["Cache", "loader"],
        "created_ts": "2023-11-14T22:14:20",
        "day": "2023-11-14",
    }


def test_sql_csv_keeps_lists_as_json(seeded: Path) -> None:
    proc = workbench(
        seeded, "sql", "SELECT id, title, facts FROM observations ORDER BY id", "--csv"
    )
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [r["id"] for r in rows] == ["1", "2", "3"]
    assert json.loads(rows[0]["facts"]) == ["123", "45"]
    assert rows[1]["facts"] == "[]"


def test_sql_parquet_round_trips_through_polars(seeded: Path, tmp_path: Path) -> None:
    target = tmp_path / "observations.parquet"
    proc = workbench(
        seeded,
        "sql",
        "SELECT id, project, concepts, discovery_tokens FROM observations ORDER BY id",
        "--parquet",
        str(target),
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote 3 rows, 4 columns to {target}" in proc.stdout
    frame = pl.read_parquet(target)
    assert frame.schema["concepts"] == pl.List(pl.String)
    assert frame.to_dicts() == [
        {"id": 1, "project": "alpha", "concepts": ["Cache", "loader"], "discovery_tokens": 100},
        {"id": 2, "project": "alpha", "concepts": ["cache", "lock", "loader"],
         "discovery_tokens": 20},
        {"id": 3, "project": "beta", "concepts": ["lock", "cache", "Cache"], "discovery_tokens": 0},
    ]  # fmt: skip
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_sql_reads_the_query_from_stdin(seeded: Path) -> None:
    proc = workbench(seeded, "sql", "-", "--json", stdin=GROUP_BY)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == GROUPED


def test_sql_takes_one_output_format(seeded: Path, tmp_path: Path) -> None:
    proc = workbench(seeded, "sql", GROUP_BY, "--json", "--csv")
    assert proc.returncode == 1
    assert "choose one output" in proc.stderr


# ----- refusals -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("DELETE FROM observations", "DELETE"),
        ("INSERT INTO store.observations (title) VALUES ('x')", "INSERT"),
        ("UPDATE store.observations SET title = 'x'", "UPDATE"),
        ("CREATE TABLE t AS SELECT * FROM observations", "CREATE"),
        ("DROP VIEW observations", "DROP"),
        ("ATTACH '{db}' AS rw (TYPE sqlite)", "ATTACH"),
        ("COPY observations TO '{tmp}/out.csv'", "COPY"),
        ("INSTALL sqlite", "INSTALL"),
        ("LOAD sqlite", "LOAD"),
        ("PRAGMA enable_checkpoint_on_shutdown", "PRAGMA"),
        ("SET enable_external_access = true", "SET"),
    ],
)
def test_sql_refuses_writes_and_leaves_the_file_alone(
    seeded: Path, tmp_path: Path, statement: str, kind: str
) -> None:
    db = seeded / DB_NAME
    before = digest(db)
    proc = workbench(seeded, "sql", statement.format(db=db, tmp=tmp_path))
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert f"error: workbench sql only reads: {kind} statements are refused" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert digest(db) == before
    assert not (tmp_path / "out.csv").exists()


def test_sql_runs_exactly_one_statement(seeded: Path) -> None:
    db = seeded / DB_NAME
    before = digest(db)
    proc = workbench(seeded, "sql", "SELECT 1; DELETE FROM store.observations")
    assert proc.returncode == 1
    assert "exactly one statement; got 2" in proc.stderr
    assert digest(db) == before


def test_sql_errors_are_messages(seeded: Path, tmp_path: Path) -> None:
    bad = workbench(seeded, "sql", "SELECT nope FROM observations")
    assert bad.returncode == 1
    assert bad.stderr.startswith("error: DuckDB could not run the query")
    assert "Traceback" not in bad.stderr
    missing = workbench(tmp_path / "elsewhere", "sql", "SELECT 1")
    assert missing.returncode == 1
    assert "no workbench database at" in missing.stderr
    assert "workbench serve" in missing.stderr


def test_sql_needs_no_network_and_no_extension_download(seeded: Path, tmp_path: Path) -> None:
    """A fresh HOME (no ~/.duckdb) and every proxy pointing at a closed port: still works."""
    home = tmp_path / "home"
    home.mkdir()
    dead = "http://127.0.0.1:9"
    proc = workbench(
        seeded,
        "sql",
        GROUP_BY,
        "--json",
        HOME=str(home),
        http_proxy=dead,
        https_proxy=dead,
        HTTP_PROXY=dead,
        HTTPS_PROXY=dead,
        ALL_PROXY=dead,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == GROUPED
    assert list(home.iterdir()) == []  # nothing installed or cached under ~/.duckdb


# ----- workbench stats ------------------------------------------------------------------------
def test_stats_economics_json_has_the_hand_computed_numbers(seeded: Path) -> None:
    proc = workbench(seeded, "stats", "economics", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "items": analytics_data.ECONOMICS_BY_PROJECT,
        "summary": analytics_data.ECONOMICS_SUMMARY,
    }
    scoped = workbench(seeded, "stats", "--project", "alpha", "--until", "2023-11-14", "--json")
    assert json.loads(scoped.stdout)["items"] == analytics_data.ECONOMICS_BY_PROJECT[:1]


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (("economics",), ["alpha", "91.67", "summary", "90.83"]),
        (("types",), ["feature", "66.67", "bugfix"]),
        (("activity", "--by", "project"), ["alpha", "127", "beta"]),
        (("files",), ["a.py", "b.py", "c.py"]),
        (("concepts",), ["cache", "loader", "lock"]),
        (("cooccurrence",), ["cache", "loader", "lock"]),
        (("sessions",), ["s1", "s2", "600"]),
        (("roi",), ["abcd", "0.6667", "injected_tokens"]),
    ],
)
def test_stats_prints_tables(seeded: Path, args: tuple[str, ...], expect: list[str]) -> None:
    proc = workbench(seeded, "stats", *args)
    assert proc.returncode == 0, proc.stderr
    for text in expect:
        assert text in proc.stdout, (text, proc.stdout)


def test_stats_bad_options_are_messages(seeded: Path) -> None:
    proc = workbench(seeded, "stats", "files", "--by", "day")
    assert proc.returncode == 1
    assert "by='day' does not apply to files" in proc.stderr
    dates = workbench(seeded, "stats", "--since", "2023-12-01", "--until", "2023-11-01")
    assert dates.returncode == 1
    assert "dateStart is after dateEnd" in dates.stderr
