"""Forget reaches every derived copy, and says what it could not reach (issue 19, item 7).

A unique marker is seeded in an observation and in the summary of its session (their words),
a corpus is built over them, the knowledge agent (offline, real) is asked about it, and all of
it is published to the team lake (real PostgreSQL catalog, Parquet data dir). Then
``workbench forget``, ``workbench publish``, ``workbench team maintain --older-than 0s``, and
every byte under the data dir, the lake's data path and the PostgreSQL cluster's data
directory is scanned for the marker. No hit is allowed except in a place the forget report
names as not cleaned.

Real parts: the service (uvicorn on a loopback port), the CLI as subprocesses, the session's
throwaway PostgreSQL (tests/postgres.py), DuckLake on a tmp dir.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import http_json
from tests.team_harness import Machine, machine, seed
from tests.test_hardening_forget import where_is
from tests.test_team_publish_on_stop import PROJECT, team_env

pytestmark = pytest.mark.slow

MARKER = "qjvsecretmarker4417"  # lowercase: FTS stores tokens lowercased


def pg_files_holding(team_lake: Any, marker: str) -> list[str]:
    """Files of the cluster's data directory holding ``marker``, after a checkpoint (so what
    PostgreSQL keeps in shared buffers is on disk too)."""
    cluster = team_lake.cluster
    cluster.psql("CHECKPOINT")
    found = []
    needle = marker.encode()
    for root, _, names in os.walk(cluster.data):
        for name in names:
            path = Path(root) / name
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if needle in data:
                found.append(str(path.relative_to(cluster.data)))
    return found


def scan(svc: Any, team_lake: Any) -> dict[str, list[str]]:
    return {
        "data dir": where_is(MARKER, svc.data_dir),
        "lake": where_is(MARKER, team_lake.data),
        "catalog": pg_files_holding(team_lake, MARKER),
    }


def test_forget_leaves_no_copy_in_store_corpus_conversation_or_team_lake(
    team_lake: Any, make_service: Any, tmp_path: Path
) -> None:
    # With the embedder on, as a user's service runs: its vectors and the words the second
    # stage keeps per memory are copies too.
    svc = make_service(**team_env(team_lake, WORKBENCH_EMBEDDER="minilm"))
    forgotten, kept = seed(
        svc.data_dir,
        PROJECT,
        "s1",
        [f"rotate the {MARKER} signing key", "bump the queue timeout"],
        summary=f"the signing key {MARKER} was rotated; the queue timeout was bumped",
    )
    cli = Machine(data_dir=svc.data_dir, env=svc.env)
    # A corpus over the project and a conversation with its (offline) knowledge agent.
    status, body = http_json(
        "POST", f"{svc.url}/api/corpus", {"name": "keys", "project": PROJECT}, timeout=60
    )
    assert status == 200, body
    status, body = http_json(
        "POST", f"{svc.url}/api/corpus/keys/query", {"question": f"what is {MARKER}?"}, timeout=60
    )
    assert status == 200, body
    assert cli.publish_json()["added"]["summaries"] == 1
    # The indexer keeps each memory's words for the second stage (``observation_tokens``):
    # one more copy of the marker the forget must take.
    assert kept_words(svc.data_dir, forgotten, MARKER)
    before = scan(svc, team_lake)
    print("byte scan before forget:", json.dumps(before))
    assert before["lake"], "the scan cannot see the published Parquet"
    assert any(p.startswith("corpora/") for p in map(_rel(svc.data_dir), before["data dir"]))
    assert any(p.startswith("conversations/") for p in map(_rel(svc.data_dir), before["data dir"]))

    proc = cli.run("forget", str(forgotten), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["forgotten"] == [forgotten]
    published = cli.publish_json()
    proc = cli.run("team", "maintain", "--older-than", "0s", "--json")
    assert proc.returncode == 0, proc.stderr

    after = scan(svc, team_lake)
    print("byte scan after forget + publish + maintain:", json.dumps(after))
    assert after == {"data dir": [], "lake": [], "catalog": []}, report.get("copies")
    assert published["tombstoned"] == 1
    assert published["superseded"] == 1  # the summary, scrubbed, replaced its old version
    cleaned = {c["place"] for c in report["copies"]["cleaned"]}
    assert cleaned >= {"summaries", "corpora", "conversations"}
    # What no forget can reach is named, each with how to remove it.
    not_cleaned = report["copies"]["notCleaned"]
    assert {c["place"] for c in not_cleaned} >= {
        "team lake",
        "exports and backups",
        "agent session logs",
    }
    assert all(c["howToRemove"] for c in not_cleaned)

    # What readers see: local search, the summary, a colleague's SQL over the lake.
    status, found = svc.get(f"/api/search?query={quote(MARKER)}&format=json&mode=fts")
    assert status == 200
    assert (found["observations"], found["sessions"], found["prompts"]) == ([], [], [])
    status, found = svc.get(f"/api/search?query={quote(MARKER)}&format=json")  # by meaning
    assert status == 200
    assert forgotten not in [hit["id"] for hit in found["observations"]]
    status, summaries = svc.get("/api/summaries")
    assert status == 200
    assert MARKER not in json.dumps(summaries)
    assert "queue timeout was bumped" in json.dumps(summaries)
    proc = cli.run(
        "sql",
        "--team",
        "--json",
        "SELECT * FROM team_summaries UNION ALL BY NAME SELECT * FROM team_observations",
    )
    assert proc.returncode == 0, proc.stderr
    assert MARKER not in proc.stdout
    assert "queue timeout" in proc.stdout  # the rest of the memory is still there
    status, kept_row = svc.get(f"/api/observation/{kept}")
    assert status == 200, kept_row


def kept_words(data_dir: Path, observation_id: int, word: str, wait_s: float = 60.0) -> bool:
    """Whether the service's indexer kept ``word`` among the observation's words within
    ``wait_s`` (read here through a read-only connection: this process writes nothing)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
        try:
            row = conn.execute(
                "SELECT title_words FROM observation_tokens WHERE observation_id = ?",
                (observation_id,),
            ).fetchone()
        finally:
            conn.close()
        if row is not None and word in str(row[0]).split(" "):
            return True
        time.sleep(0.2)
    return False


def _rel(root: Path) -> Any:
    return lambda p: str(Path(p).relative_to(root))


def _heap_holding(team_lake: Any, marker: str) -> list[str]:
    """Table files of this test's catalog database holding ``marker`` (WAL excluded: written
    before the guard existed, PostgreSQL recycles it on its own)."""
    oid = team_lake.cluster.psql(
        f"SELECT oid FROM pg_database WHERE datname = '{team_lake.database}'"
    )
    return [p for p in pg_files_holding(team_lake, marker) if p.startswith(f"base/{oid}/")]


def test_a_lake_made_before_the_guard_loses_its_text_statistics(
    team_lake: Any, tmp_path: Path
) -> None:
    """An older lake stored min/max text in the catalog; the guard blanks them and ``team
    maintain`` rewrites the tables, so no PostgreSQL table file keeps a word."""
    from workbench.team import catalog_stats, lake

    con = lake.connect(team_lake.settings(tmp_path))
    try:
        for table in catalog_stats.STATS_TABLES:  # what a lake made by an older release had
            team_lake.cluster.psql(
                f"DROP TRIGGER {catalog_stats.NAME} ON {table}", team_lake.database
            )
        con.execute(
            "INSERT INTO lake.publish_marks (author, table_name, project, mark,"
            " published_at_epoch) VALUES (?, 'summaries', 'p', 1, 1)",
            [MARKER],
        )
    finally:
        con.close()
    stored = team_lake.cluster.psql(
        f"SELECT count(*) FROM ducklake_file_column_stats WHERE min_value = '{MARKER}'",
        team_lake.database,
    )
    assert stored == "1", "the old lake did not store the text statistic; nothing to prove"
    assert _heap_holding(team_lake, MARKER)

    m = machine(tmp_path, "m")
    m.env.update(team_env(team_lake))
    proc = m.run("team", "maintain", "--older-than", "0s", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["catalogVacuumed"] is True

    for table in catalog_stats.STATS_TABLES:
        text_bounds = team_lake.cluster.psql(
            f"SELECT count(*) FROM {table} s JOIN ducklake_column c USING (table_id, column_id)"
            " WHERE c.column_type = 'varchar' AND (s.min_value IS NOT NULL"
            " OR s.max_value IS NOT NULL)",
            team_lake.database,
        )
        assert text_bounds == "0", table
    assert _heap_holding(team_lake, MARKER) == []
