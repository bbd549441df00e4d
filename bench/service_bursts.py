"""Does the service give back what a burst of concurrent requests took? Prints figures.

A user's agents do not search one request at a time: hooks, the MCP server and the CLI hit
the service in bursts, then it idles. The routes run on anyio's worker threads, which anyio
stops after 10 s idle (``WorkerThread.MAX_IDLE_TIME``) and starts anew for the next burst;
whatever a thread opened and nobody closed stays behind. Per checkout (``--root``, or
``--before-ref`` for a ``git archive`` of a ref beside this tree), side by side on copies of
one data dir, services up at the same time:

1. a serial warm-up (``--warm`` searches and timelines by query, one connection);
2. ``--bursts`` times: ``--clients`` processes at once, each a hybrid search (JSON) and a
   timeline by a new query ``--per-client`` times, then the idle gap that lets anyio stop
   its workers, and one health request (which is what stops them);
3. after the warm-up, after each burst and after its quiet gap: the service's open
   descriptors of ``workbench.db``, its threads and its RSS (MiB).

A service that holds on to what each burst made grows row after row; one that gives it back
levels off once the bursts' peak concurrency is reached. Figures, never assertions.

``--seeded DIR``: a data dir with memories (e.g. a ``bench/search.py --root … --keep`` run's
100k with full vectors); otherwise ``--n`` observations are seeded and searched by full text
only (``WORKBENCH_EMBEDDER=none``).

Usage: python bench/service_bursts.py --before-ref REF [--root DIR] [--seeded DIR] [--n 20000]
       [--bursts 8] [--clients 8] [--per-client 3] [--warm 100]
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    free_port,
    health,
    progress,
    start_service,
    stop_service,
    tree_at,
)
from bench.search import queries, seed  # noqa: E402
from bench.search_targets import rss_mb  # noqa: E402

IDLE_S = 11.0  # anyio stops a worker thread idle for 10 s, at the next request


def requests(port: int, texts: list[str]) -> None:
    """A hybrid search (JSON) and a timeline by query for each text, on one connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for text in texts:
            for path, params in (
                ("/api/search", {"query": text, "format": "json"}),
                ("/api/timeline", {"query": text}),
            ):
                conn.request("GET", f"{path}?{urllib.parse.urlencode(params)}")
                conn.getresponse().read()
    finally:
        conn.close()


def reading(pid: int) -> tuple[int, int, float]:
    """(descriptors of workbench.db, threads, RSS MiB) of ``pid``."""
    fds = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds += os.path.basename(os.readlink(f"/proc/{pid}/fd/{fd}")) == "workbench.db"
        except OSError:
            continue
    return fds, len(os.listdir(f"/proc/{pid}/task")), rss_mb(pid)


def client_command(port: int, texts: list[str]) -> list[str]:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from bench.service_bursts import requests;"
        " requests(int(sys.argv[2]), sys.argv[3:])"
    )
    return [sys.executable, "-c", code, str(ROOT), str(port), *texts]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before-ref", help="a git ref run beside this tree")
    parser.add_argument("--root", action="append", default=[], help="a checkout (repeatable)")
    parser.add_argument("--seeded", help="a data dir with memories (copied per side)")
    parser.add_argument("--n", type=int, default=20_000, help="observations to seed otherwise")
    parser.add_argument("--bursts", type=int, default=8)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--per-client", type=int, default=3)
    parser.add_argument("--warm", type=int, default=100)
    args = parser.parse_args(argv)
    roots = [Path(r).resolve() for r in args.root] or [ROOT]
    if args.before_ref:
        roots.insert(0, tree_at(args.before_ref))
    work = Path(tempfile.mkdtemp(prefix="wb-bench-bursts-"))
    rng = random.Random(7)
    if args.seeded:
        source = Path(args.seeded)
    else:
        source = work / "seed"
        source.mkdir()
        progress(f"seeding {args.n:,} observations")
        seed(source / "workbench.db", args.n, rng)
    texts = queries(args.warm + args.bursts * args.clients * args.per_client, rng)
    sides = []
    try:
        for n, root in enumerate(roots):
            data = work / f"side{n}" / "data"
            shutil.copytree(source, data, ignore=shutil.ignore_patterns("*.pid", "*.lock"))
            port = free_port()
            progress(f"starting {root}")
            # Seeded here: full text only (no embedding worker competing for the CPU).
            embedder = "minilm" if args.seeded else "none"
            proc = start_service(data, port, root=root, wait_s=300.0, WORKBENCH_EMBEDDER=embedder)
            sides.append((root, port, proc))
        rows: list[tuple[str, list[tuple[int, int, float]]]] = []
        warm, rest = texts[: args.warm], texts[args.warm :]
        for _, port, _ in sides:
            requests(port, warm)
        rows.append(("after the warm-up", [reading(p.pid) for _, _, p in sides]))
        for burst in range(args.bursts):
            clients = []
            for _, port, _ in sides:
                for c in range(args.clients):
                    start = (burst * args.clients + c) * args.per_client
                    mine = rest[start : start + args.per_client]
                    clients.append(subprocess.Popen(client_command(port, mine)))
            for client in clients:
                client.wait()
            rows.append((f"after burst {burst + 1}", [reading(p.pid) for _, _, p in sides]))
            time.sleep(IDLE_S)
            rows.append((f"  {IDLE_S:.0f} s quiet", [reading(p.pid) for _, _, p in sides]))
            for _, port, _ in sides:
                health(port, timeout=30.0)
        load = os.getloadavg()[0]
        print(f"load average {load:.1f} on {os.cpu_count()} cores; {args.clients} clients a burst")
        head = "".join(f"  {str(r)[-28:]:>30}" for r, _, _ in sides)
        print(f"{'':20}{head}")
        print(f"{'':20}" + "".join(f"  {'fds  threads  RSS MiB':>30}" for _ in sides))
        for label, readings in rows:
            cells = "".join(f"  {f'{f:3d}  {t:7d}  {m:7.1f}':>30}" for f, t, m in readings)
            print(f"{label:20}{cells}")
    finally:
        for _, _, proc in sides:
            stop_service(proc)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
