"""The team lake with its Parquet files on S3: a real S3-compatible server (moto) over HTTP.

Real parts: ``python -m moto.server`` on a loopback port (tests/s3_server.py) as the object
store, reached by DuckDB's httpfs through ``AWS_ENDPOINT_URL=http://…``; the session's
PostgreSQL as the DuckLake catalog; stores seeded with the real ``Store`` API; every command a
real ``python -m workbench`` run whose only S3 settings are the standard ``AWS_*`` variables.
What reached the bucket is listed and downloaded through the S3 API and scanned byte by byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port
from tests.s3_server import S3Server, running_server, unavailable_reason
from tests.team_harness import Machine, forget, machine, seed

pytestmark = pytest.mark.slow

PRIVATE = "hunter2-S3-PRIVATE-MARKER-5e1c"
FORGOTTEN = "FORGOTTEN-S3-9d2e-token-notes"
PREFIX = "team"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """One moto server for the session (each test makes its own bucket), or a skip saying why."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    with running_server() as server:
        yield server


@pytest.fixture
def bucket(s3_server: S3Server) -> str:
    return s3_server.new_bucket()


def _on_s3(m: Machine, server: S3Server) -> Machine:
    """``m`` with only the server's AWS_* variables (none leaking from the developer's shell)."""
    env = {k: v for k, v in m.env.items() if not k.startswith("AWS_")}
    return Machine(data_dir=m.data_dir, env={**env, **server.env()})


def _without(m: Machine, *names: str) -> Machine:
    return Machine(data_dir=m.data_dir, env={k: v for k, v in m.env.items() if k not in names})


def _author(
    tmp_path: Path, server: S3Server, team_lake: Any, bucket: str, name: str
) -> tuple[Machine, Any]:
    m = _on_s3(machine(tmp_path, name), server)
    return m, lambda: m.run(
        "team",
        "init",
        "--catalog",
        team_lake.dsn,
        "--data",
        f"s3://{bucket}/{PREFIX}",
        "--project",
        "api",
        "--author",
        name,
    )


def _ok(out: Any) -> Any:
    assert out.returncode == 0, out.stderr + out.stdout
    return out


def _json(m: Machine, *args: str) -> Any:
    return json.loads(_ok(m.run(*args, "--json")).stdout)


def _objects(server: S3Server, bucket: str) -> dict[str, bytes]:
    return {key: server.get(bucket, key) for key in server.keys(bucket)}


def _values(objects: dict[str, bytes], tmp_path: Path) -> str:
    """Every value of every Parquet object, as text (pages may be compressed: bytes can hide)."""
    import duckdb

    copies = tmp_path / "downloaded"
    copies.mkdir(exist_ok=True)
    con = duckdb.connect(":memory:")
    chunks = []
    try:
        for i, (key, raw) in enumerate(sorted(objects.items())):
            path = copies / f"{i}.parquet"
            path.write_bytes(raw)
            chunks.append(
                key + repr(con.execute(f"SELECT * FROM read_parquet('{path}')").fetchall())
            )
    finally:
        con.close()
    return "\n".join(chunks)


def test_init_publish_search_and_sql_with_the_data_on_s3(
    s3_server: S3Server, team_lake: Any, bucket: str, tmp_path: Path
) -> None:
    ana, ana_init = _author(tmp_path, s3_server, team_lake, bucket, "ana")
    seed(
        ana.data_dir,
        "api",
        "a1",
        [f"cache key <private>{PRIVATE}</private> rotated", "cache layer"],
        narrative=f"used <private>{PRIVATE}</private> then",
        summary=f"request <private>{PRIVATE}</private>",
    )
    bob, bob_init = _author(tmp_path, s3_server, team_lake, bucket, "bob")
    seed(bob.data_dir, "api", "b1", ["cache eviction by ttl"])

    _ok(ana_init())
    _ok(bob_init())
    assert _json(ana, "publish")["added"]["observations"] == 2
    assert _json(bob, "publish")["added"]["observations"] == 1

    found = _json(ana, "search", "--team", "cache")
    hits = sorted((h["author"], h["title"]) for h in found["observations"])
    assert [a for a, _ in hits] == ["bob", "me", "me"]  # ana's own rows: local, shown once
    assert hits[0] == ("bob", "cache eviction by ttl")
    assert found["teamResults"] == 1
    counts = _json(
        bob,
        "sql",
        "--team",
        "SELECT author, count(*) AS n FROM team_observations GROUP BY author ORDER BY author",
    )
    assert counts == [{"author": "ana", "n": 2}, {"author": "bob", "n": 1}]

    objects = _objects(s3_server, bucket)
    assert len(objects) >= 3  # sessions, observations, summaries at least: in the bucket
    assert all(k.startswith(f"{PREFIX}/") and k.endswith(".parquet") for k in objects)
    for key, raw in objects.items():
        for marker in (PRIVATE, "<private>"):
            assert marker.encode() not in raw, f"{marker} in s3://{bucket}/{key}"
    text = _values(objects, tmp_path)
    assert "cache eviction by ttl" in text  # the scan sees the published text at all
    assert PRIVATE not in text
    assert "<private" not in text


def test_missing_credentials_name_the_variables_to_set_and_nothing_is_stored(
    s3_server: S3Server, team_lake: Any, bucket: str, tmp_path: Path
) -> None:
    ana, ana_init = _author(tmp_path, s3_server, team_lake, bucket, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer"])
    bare = _without(ana, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")

    refused = bare.run(
        "team", "init", "--catalog", team_lake.dsn, "--data", f"s3://{bucket}/{PREFIX}"
    )

    assert refused.returncode == 1
    assert "AWS_ACCESS_KEY_ID" in refused.stderr
    assert "AWS_SECRET_ACCESS_KEY" in refused.stderr
    assert "Traceback" not in refused.stderr
    settings = ana.data_dir / "settings.json"
    assert not settings.exists() or "team_data" not in json.loads(settings.read_text())

    _ok(ana_init())
    for args in (("publish",), ("sql", "--team", "SELECT 1")):
        out = _without(ana, "AWS_SECRET_ACCESS_KEY").run(*args)
        assert out.returncode == 1, out.stdout
        assert "AWS_SECRET_ACCESS_KEY" in out.stderr
        assert "Traceback" not in out.stderr
    assert s3_server.keys(bucket) == []  # nothing was published without credentials


def test_a_malformed_endpoint_says_how_to_write_it(
    s3_server: S3Server, team_lake: Any, bucket: str, tmp_path: Path
) -> None:
    ana, _ = _author(tmp_path, s3_server, team_lake, bucket, "ana")
    port = s3_server.port
    for endpoint in (f"127.0.0.1:{port}", f"ftp://127.0.0.1:{port}", "http://"):
        out = Machine(ana.data_dir, {**ana.env, "AWS_ENDPOINT_URL": endpoint}).run(
            "team", "init", "--catalog", team_lake.dsn, "--data", f"s3://{bucket}/{PREFIX}"
        )
        assert out.returncode == 1, out.stdout
        assert "AWS_ENDPOINT_URL" in out.stderr
        assert "http://HOST:PORT" in out.stderr
        assert "Traceback" not in out.stderr


def test_maintain_on_s3_deletes_a_forgotten_observations_files(
    s3_server: S3Server, team_lake: Any, bucket: str, tmp_path: Path
) -> None:
    ana, ana_init = _author(tmp_path, s3_server, team_lake, bucket, "ana")
    seed(ana.data_dir, "api", "s1", ["kept"])
    (gone,) = seed(ana.data_dir, "api", "s1", ["rotated tokens"], narrative=FORGOTTEN, at_ms=1)
    _ok(ana_init())
    first = _json(ana, "publish")["snapshot"]
    forget(ana.data_dir, gone)
    assert _json(ana, "publish")["tombstoned"] == 1
    before = _objects(s3_server, bucket)
    holding = [k for k, raw in before.items() if FORGOTTEN.encode() in raw]
    assert holding  # the old snapshot's file still has the text until maintenance

    report = _json(ana, "team", "maintain", "--older-than", "0s")

    assert first in report["expiredSnapshots"]
    after = _objects(s3_server, bucket)
    assert after
    assert [k for k, raw in after.items() if FORGOTTEN.encode() in raw] == []
    assert set(holding).isdisjoint(after)
    for side, objects in (("parquetBefore", before), ("parquetAfter", after)):
        assert report[side] == {"files": len(objects), "bytes": sum(map(len, objects.values()))}
    rows = _json(ana, "sql", "--team", "SELECT title FROM team_observations ORDER BY title")
    assert rows == [{"title": "kept"}]
    travel = ana.run("sql", "--team", "--at-snapshot", str(first), "SELECT 1")
    assert travel.returncode == 1
    assert "expired by `workbench team maintain`" in travel.stderr


def test_a_missing_bucket_or_an_unreachable_server_is_a_clear_error_not_a_traceback(
    s3_server: S3Server, team_lake: Any, bucket: str, tmp_path: Path
) -> None:
    ana, ana_init = _author(tmp_path, s3_server, team_lake, bucket, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer"])
    missing = f"{bucket}-missing"

    refused = ana.run(
        "team", "init", "--catalog", team_lake.dsn, "--data", f"s3://{missing}/{PREFIX}"
    )

    assert refused.returncode == 1
    assert f"s3://{missing}/{PREFIX}" in refused.stderr
    assert "bucket exists" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (ana.data_dir / "settings.json").exists()

    _ok(ana_init())
    down = Machine(ana.data_dir, {**ana.env, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"})
    for args in (("publish",), ("team", "maintain", "--older-than", "0s")):
        out = down.run(*args)
        assert out.returncode == 1, out.stdout
        assert f"team data path s3://{bucket}/{PREFIX}" in out.stderr
        assert "AWS_ENDPOINT_URL" in out.stderr
        assert "Traceback" not in out.stderr
    assert _json(ana, "publish")["added"]["observations"] == 1  # nothing half-done to redo
