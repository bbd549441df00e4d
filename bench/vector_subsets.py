"""What a project-filtered vector search costs by the project's size, per checkout. Prints figures.

A hybrid search with a project filter (the held-out benchmark's per-conversation search, the
MCP search of one repository, the timeline's anchor) scans only that project's vectors. This
measures ``VectorIndex.search(q, 50, projects=[p])`` for projects of several sizes in one
index, for each ``--root`` (a checkout whose ``workbench.recall.vectors`` runs, in its own
process, one after the other on the same vectors):

1. builds the index kind (``--kind``, default ``fp16``: the service's) over ``--vectors``
   random unit vectors (seeded), split into projects of the sizes below and one project
   holding the rest;
2. for each project, ``--queries`` queries (random unit vectors): the thread CPU of the
   search (p50 and p95, ms) and whether its top 50 is the exact top 50 by numpy over the
   project's fp32 vectors (ids compared as sets: the fp16 codes may swap near-ties, so the
   count of queries whose set differs is printed, not asserted).

Figures, never assertions; the load average is printed (the box is shared).

Usage: python bench/vector_subsets.py [--root DIR]... [--vectors 100000] [--kind fp16]
       [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (10, 50, 200, 600, 2_000, 4_000, 8_000)
DIM = 384
TOP = 50


def measure(args: argparse.Namespace) -> dict[str, object]:
    """One checkout's figures (run in a process whose ``sys.path`` starts at that checkout)."""
    import numpy as np

    from workbench.recall.vectors import VectorIndex

    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal((args.vectors, DIM), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    projects: list[str | None] = []
    for size in SIZES:
        projects.extend([f"p{size}"] * size)
    rest = args.vectors - len(projects)
    projects.extend(["rest"] * rest)
    order = rng.permutation(args.vectors)  # each project's vectors spread over the index
    labels = [projects[i] for i in order]
    index = VectorIndex("bench", DIM, args.kind)
    ids = list(range(1, args.vectors + 1))
    index.add(ids, [f"h{i}" for i in ids], x, projects=labels)
    members = {p: np.flatnonzero(np.asarray(labels) == p) for p in dict.fromkeys(labels)}
    queries = rng.standard_normal((args.queries, DIM), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    rows: dict[str, dict[str, float]] = {}
    for project, slots in members.items():
        if project is None:
            continue
        index.search(queries[0], TOP, projects=[project])  # the project's cached filter
        spent: list[float] = []
        differ = 0
        for q in queries:
            started = time.thread_time()
            found = index.search(q, TOP, projects=[project])
            spent.append(time.thread_time() - started)
            exact = slots[np.argsort(-(x[slots] @ q), kind="stable")[:TOP]] + 1
            differ += {i for i, _ in found} != {int(i) for i in exact}
        spent.sort()
        rows[project] = {
            "size": len(slots),
            "p50": statistics.median(spent) * 1000,
            "p95": spent[int(0.95 * (len(spent) - 1))] * 1000,
            "differ": differ,
        }
    import workbench.recall.vectors as module

    return {"load": os.getloadavg()[0], "rows": rows, "module": module.__file__}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", action="append", help="a checkout to measure (repeatable)")
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--kind", default="fp16")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.vectors <= sum(SIZES):
        parser.error(f"--vectors must exceed {sum(SIZES)} (the projects' sizes) and leave a rest")
    if args.child:
        print(json.dumps(measure(args)))
        return 0
    roots = [Path(r).resolve() for r in (args.root or [str(ROOT)])]
    results: dict[str, Any] = {}
    for root in roots:
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            f"--vectors={args.vectors}",
            f"--kind={args.kind}",
            f"--queries={args.queries}",
            f"--seed={args.seed}",
        ]
        env = {**os.environ, "PYTHONPATH": str(root)}
        done = subprocess.run(command, env=env, cwd=root, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{root}: {done.stderr.strip()[-2000:]}")
        results[str(root)] = json.loads(done.stdout)
    print(
        f"project-filtered top {TOP}, {args.kind}, {args.vectors} vectors, {args.queries} "
        "queries per project (thread CPU ms; differ = queries whose top set is not numpy's)"
    )
    print(f"{'checkout':<28} {'load':>5} {'project':>8} {'p50':>8} {'p95':>8} {'differ':>7}")
    for where, found in results.items():
        print(f"{where}: {found['module']}")
        for row in sorted(found["rows"].values(), key=lambda r: r["size"]):
            print(
                f"{Path(where).name[-28:]:<28} {found['load']:>5.1f} {row['size']:>8} "
                f"{row['p50']:>8.3f} {row['p95']:>8.3f} {row['differ']:>7}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
