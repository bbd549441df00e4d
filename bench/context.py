"""Context injection latency through the real HTTP API, at growing history sizes. Prints figures.

For each size (default 10,000 and 100,000 observations in one project, plus one summary per
ten observations), a store is seeded directly (before the service starts: the service is the
one writer), ``python -m service`` is started on it, and each route is timed from a fresh
connection per request, as a hook makes it:

- ``GET /api/context/inject?projects=bench`` (the SessionStart block, ledger write included):
  the target is p50 ≤ 20 ms at 100k and no growth with size;
- ``GET /api/context/file`` (file history before a Read) for a file with ~80 observations at
  100k, first as shipped (a scan of the files JSON) and then with an ``observation_files``
  table added by hand (the indexed lookup a proposed migration would give);
- in-process, ``build_session_context`` alone (no HTTP, no ledger).

The service runs with ``WORKBENCH_EMBEDDER=none`` so the embedding catch-up of a freshly
seeded store does not compete for the two cores.

Usage: python bench/context.py [--sizes 10000,100000] [--requests 200]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, start_service, stop_service  # noqa: E402
from workbench.models import OBSERVATION_TYPES, ObservationDraft, SummaryDraft  # noqa: E402
from workbench.recall.context import ContextLimits, build_session_context  # noqa: E402
from workbench.store import observations, summaries  # noqa: E402
from workbench.store.connection import atomic  # noqa: E402
from workbench.store.database import Store  # noqa: E402

PROJECT = "bench"
CWD = "/home/dev/src/bench"
FILES = 3000
T0 = 1_764_547_200_000  # 2025-12-01T00:00:00Z
FILE_TABLE_DDL = (
    "CREATE TABLE IF NOT EXISTS observation_files (path TEXT NOT NULL, observation_id INTEGER"
    " NOT NULL, modified INTEGER NOT NULL, PRIMARY KEY (path, observation_id, modified))"
    " WITHOUT ROWID",
    "INSERT OR IGNORE INTO observation_files SELECT value, o.id, 0 FROM observations o,"
    " json_each(o.files_read) UNION ALL SELECT value, o.id, 1 FROM observations o,"
    " json_each(o.files_modified)",
)
# No background embedding: catching up on a freshly seeded 100k store would keep both cores
# busy for minutes and measure that instead (steady state embeds only new rows).
SERVICE_ENV = {"WORKBENCH_COMPRESSOR": "offline", "WORKBENCH_EMBEDDER": "none"}


def seed(db: Path, count: int) -> None:
    rng = random.Random(7)
    narrative = "Found how the module handles retries and why the timeout is per attempt. " * 4
    with Store(db) as store, atomic(store.conn):
        for i in range(count):
            files = [f"src/pkg{n % 50}/module_{n}.py" for n in rng.sample(range(FILES), 3)]
            observations.insert(
                store.conn,
                ObservationDraft(
                    type=OBSERVATION_TYPES[i % len(OBSERVATION_TYPES)],
                    title=f"Observation {i}: retries and timeouts in module {i % FILES}",
                    narrative=narrative,
                    facts=["timeout is per attempt", "three retries with backoff"],
                    files_read=files[: rng.randint(1, 2)],
                    files_modified=files[2:] if i % 3 == 0 else [],
                ),
                content_session_id=f"session-{i // 40}",
                project=PROJECT,
                discovery_tokens=rng.randint(300, 3000),
                created_ms=T0 + i * 60_000,
            )
            if i % 10 == 9:
                summaries.upsert(
                    store.conn,
                    SummaryDraft(
                        request="Make the client retry on timeouts",
                        learned="The timeout applies per attempt",
                        completed="Retries with backoff",
                        next_steps="Measure the p95",
                    ),
                    content_session_id=f"session-{i // 40}",
                    project=PROJECT,
                    prompt_number=i,
                    created_ms=T0 + i * 60_000 + 1,
                )


def busiest_file(db: Path) -> tuple[str, int]:
    with Store(db, readonly=True) as store:
        counts: dict[str, int] = {}
        for row in store.conn.execute(
            "SELECT files_read, files_modified FROM observations ORDER BY id DESC LIMIT 20000"
        ):
            for col in row:
                for name in json.loads(col):
                    counts[name] = counts.get(name, 0) + 1
    name = sorted(counts, key=lambda n: (-counts[n], n))[len(counts) // 2]  # a median file
    with Store(db, readonly=True) as store:
        needle = f'"{name}"'
        total = store.conn.execute(
            "SELECT COUNT(*) FROM observations WHERE instr(files_read, ?) OR"
            " instr(files_modified, ?)",
            (needle, needle),
        ).fetchone()[0]
    return name, int(total)


def get(port: int, target: str) -> tuple[int, bytes]:
    """One GET on a fresh connection, as a hook makes it."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", target)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def timed(port: int, target: str, requests: int) -> tuple[float, float, bytes]:
    body = b""
    for _ in range(10):  # warm the page cache and the interpreter
        status, body = get(port, target)
        assert status == 200, (status, body[:200])
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        status, body = get(port, target)
        samples.append((time.perf_counter() - started) * 1000)
        assert status == 200
    return percentile(samples, 50), percentile(samples, 95), body


def percentile(samples: list[float], pct: int) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def in_process(db: Path, runs: int) -> float:
    with Store(db, readonly=True) as store:
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            build_session_context(store.conn, [PROJECT], ContextLimits())
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def measure(size: int, requests: int, tmp: Path) -> dict[str, object]:
    data_dir = tmp / f"data-{size}"
    data_dir.mkdir()
    db = data_dir / "workbench.db"
    started = time.perf_counter()
    seed(db, size)
    seeded_s = time.perf_counter() - started
    name, matches = busiest_file(db)
    file_target = (
        f"/api/context/file?path={quote(CWD + '/' + name, safe='')}&cwd={quote(CWD, safe='')}"
        "&mtime=0&contentSessionId=bench"
    )
    port = free_port()
    proc = start_service(data_dir, port, **SERVICE_ENV)
    try:
        inject = timed(port, f"/api/context/inject?projects={PROJECT}&contentSessionId=b", requests)
        scan = timed(port, file_target, max(requests // 4, 20))
    finally:
        stop_service(proc)
    with Store(db) as store, atomic(store.conn):
        for statement in FILE_TABLE_DDL:
            store.conn.execute(statement)
    proc = start_service(data_dir, port, **SERVICE_ENV)
    try:
        indexed = timed(port, file_target, requests)
    finally:
        stop_service(proc)
    return {
        "size": size,
        "seed_s": seeded_s,
        "inject_p50": inject[0],
        "inject_p95": inject[1],
        "block_chars": len(inject[2].decode("utf-8")),
        "build_ms": in_process(db, 50),
        "file_matches": matches,
        "scan_p50": scan[0],
        "scan_p95": scan[1],
        "indexed_p50": indexed[0],
        "indexed_p95": indexed[1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="workbench-bench-context-") as tmp:
        rows = [measure(size, args.requests, Path(tmp)) for size in sizes]
    print(f"requests per route: {args.requests} (fresh connection each), 2-core figures vary ±20%")
    header = (
        f"{'observations':>12} {'inject p50':>10} {'p95':>7} {'block':>7} {'build':>7}"
        f" {'file hits':>9} {'scan p50':>9} {'p95':>7} {'indexed p50':>11} {'p95':>7}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['size']:>12,} {r['inject_p50']:>8.1f}ms {r['inject_p95']:>5.1f}ms"
            f" {r['block_chars']:>7,} {r['build_ms']:>5.1f}ms {r['file_matches']:>9}"
            f" {r['scan_p50']:>7.1f}ms {r['scan_p95']:>5.1f}ms"
            f" {r['indexed_p50']:>9.1f}ms {r['indexed_p95']:>5.1f}ms"
        )
    print("block = characters of the injected text; build = in-process, no HTTP, no ledger")


if __name__ == "__main__":
    main()
