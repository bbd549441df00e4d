"""Hook writes while ``POST /api/reindex`` rebuilds full text, checkout against checkout.

A reindex used to rebuild the FTS tables in one transaction: every hook write meanwhile
waited for the write lock and, past the hook route's wait (0.4 s + 0.4 s), got 503
``STORE_BUSY`` and was spooled. ``store/fts_rebuild.py`` rebuilds in short transactions.

For each ``--root`` (a checkout; give it twice for before/after), a real service with no
embedder (the reindex is then full text only) on a copy of ``--db`` (a store with many
observations: the seeded 100k one), ``--rounds`` reindexes, each with a writer posting one
PostToolUse event every 20 ms until the reindex reports done. Printed per checkout: the
reindex's full-text seconds, writes during it, how many got 503, and the write latency
p50 / p99 / max. Figures, never assertions.

    python bench/reindex_writes.py --db /tmp/i21lat/seeded100k/workbench.db \\
        --root /work/wt/base --root .
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.concurrency_analytics import call, observation  # noqa: E402
from bench.harness import free_port, progress, start_service, stop_service  # noqa: E402


def _reindex_with_writes(port: int, first: int) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: list[int | None] = []
    stop = threading.Event()

    def writer() -> None:
        n = first
        while not stop.is_set():
            started = time.perf_counter()
            status, _ = call(port, "POST", "/api/sessions/observations", observation(n))
            latencies.append((time.perf_counter() - started) * 1000)
            statuses.append(status)
            n += 1
            stop.wait(0.02)

    thread = threading.Thread(target=writer)
    thread.start()
    call(port, "POST", "/api/reindex")
    job: dict[str, Any] = {}
    while True:
        _, status = call(port, "GET", "/api/index/status")
        job = (status or {}).get("reindex") or {}
        if job.get("state") in ("done", "failed"):
            break
        time.sleep(0.05)
    stop.set()
    thread.join()
    ordered = sorted(latencies)
    return {
        "fts_s": job.get("ftsSeconds", job.get("fts_seconds")),
        "state": job.get("state"),
        "writes": len(statuses),
        "busy_503": sum(1 for s in statuses if s == 503),
        "p50_ms": statistics.median(ordered) if ordered else None,
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] if ordered else None,
        "max_ms": ordered[-1] if ordered else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a store to copy (not modified)")
    parser.add_argument("--root", type=Path, action="append", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {str(r): [] for r in args.root}
    work = Path(tempfile.mkdtemp(prefix="wb-reindex-writes-"))
    try:
        procs = {}
        ports = {}
        for k, root in enumerate(args.root):
            data_dir = work / f"side{k}"
            data_dir.mkdir()
            shutil.copy(args.db, data_dir / "workbench.db")
            ports[str(root)] = free_port()
            progress(f"starting the service of {root}")
            procs[str(root)] = start_service(
                data_dir, ports[str(root)], root=root.resolve(), wait_s=300,
                WORKBENCH_EMBEDDER="none",
            )  # fmt: skip
        for r in range(args.rounds):  # sides alternate, so load hits both alike
            for root in args.root:
                progress(f"round {r + 1}: {root}")
                results[str(root)].append(_reindex_with_writes(ports[str(root)], 10**7 * (r + 1)))
        for proc in procs.values():
            stop_service(proc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    header = ("checkout", "fts s", "writes", "503", "p50", "p99", "max ms")
    print("{:<28} {:>6} {:>6} {:>4} {:>7} {:>7} {:>8}".format(*header))
    for root, rows in results.items():
        for row in rows:
            print(
                f"{root[-28:]:<28} {row['fts_s'] or 0:>6.2f} {row['writes']:>6} "
                f"{row['busy_503']:>4} {row['p50_ms'] or 0:>7.1f} {row['p99_ms'] or 0:>7.1f} "
                f"{row['max_ms'] or 0:>8.1f}"
            )


if __name__ == "__main__":
    main()
