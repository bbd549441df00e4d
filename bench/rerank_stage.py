"""The ``learned`` second stage alone, checkouts side by side: CPU per search, RSS, same order.

Issue 21: at 100k the stage cost hybrid ~7 ms of CPU per search and the service ~44 MiB of
RSS. This bench runs only the stage (``rerank_learned.order`` over the static model's word
pieces) of each ``--root`` checkout, each in a fresh process of this venv, over the same
candidate lists of a real store (``--db``, e.g. a data dir ``bench/search.py --keep`` seeded):
full text's top 50 of each query, fused with a vector list made up per query (fixed seeds),
the static tier's embedder loaded first as the service holds it. It prints per checkout the
stage's CPU per search (``time.process_time``, immune to waiting for a CPU, not to a busy
box's cache contention; the mean, and p50/p95 of each search's CPU and wall time), its RSS
growth from loading the stage to the last search, and whether every checkout's orders are
those of the first (same ids, same order).

Usage: .venv/bin/python bench/rerank_stage.py --db DIR/workbench.db --root /work/wt/base
       --root . [--queries 700]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs inside each checkout's process: argv = root, db, queries, out.
PROBE = """
import json, os, random, sqlite3, sys, time
root, db, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, root)

def rss():
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0

from bench.search import queries
from workbench.recall import fts, rerank_learned, rerank_tokens
from workbench.recall.embed import StaticEmbedder
from workbench.recall.rerank_features import Candidates

assert rerank_learned.__file__.startswith(root), rerank_learned.__file__
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
lists = []
for q in queries(count, random.Random(11)):
    text = fts.rank(conn, "observations", q, limit=50)
    if len(text) < 2:
        continue
    rng = random.Random(q)
    vector = sorted(((i, rng.random()) for i, _ in text), key=lambda x: -x[1])[:30]
    cos = dict(vector)
    fused = sorted(
        ((i, 0.2 * s / text[0][1] + 0.8 * cos.get(i, 0.0)) for i, s in text), key=lambda x: -x[1]
    )
    lists.append((q, Candidates(fused, text, vector, {})))
StaticEmbedder()  # the service's static tier holds one (and its tokenizer)
before = rss()
table = rerank_tokens.load_static()
orders, each_cpu, each_wall = [], [], []
started = time.process_time()
for q, candidates in lists:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    orders.append([i for i, _ in rerank_learned.order(conn, q, candidates, 50, table)])
    each_cpu.append((time.process_time() - cpu0) * 1e3)
    each_wall.append((time.perf_counter() - wall0) * 1e3)
cpu = (time.process_time() - started) / len(lists) * 1e3
with open(out, "w", encoding="utf-8") as stream:
    json.dump({"cpu_ms": cpu, "rss_before": before, "rss_after": rss(), "orders": orders,
               "each_cpu": each_cpu, "each_wall": each_wall}, stream)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="a seeded store's workbench.db")
    parser.add_argument("--root", action="append", required=True, help="a checkout (repeat)")
    parser.add_argument("--queries", type=int, default=700)
    args = parser.parse_args()
    results: list[tuple[str, dict[str, object]]] = []
    with tempfile.TemporaryDirectory(prefix="rerank-stage-") as tmp:
        for k, given in enumerate(args.root):
            root = str(Path(given).resolve())
            out = Path(tmp) / f"{k}.json"
            env = {**os.environ, "PYTHONPATH": root}
            subprocess.run(
                [sys.executable, "-c", PROBE, root, str(args.db), str(args.queries), str(out)],
                check=True,
                env=env,
                timeout=3600,
            )
            results.append((root, json.loads(out.read_text(encoding="utf-8"))))
    load = os.getloadavg()
    print(f"learned stage alone, {args.db}; load average {load[0]:.1f} / {load[1]:.1f} on 2 cores")
    first = results[0][1]["orders"]
    for root, r in results:
        orders = r["orders"]
        assert isinstance(orders, list)
        grew = float(str(r["rss_after"])) - float(str(r["rss_before"]))
        same = sum(a == b for a, b in zip(orders, first, strict=True)) if first else 0
        print(
            f"  {root:32} {len(orders)} searches  CPU {float(str(r['cpu_ms'])):.2f} ms/search"
            f"  RSS +{grew:.1f} MiB  orders as the first checkout's: {same} of {len(orders)}"
        )
        for kind in ("cpu", "wall"):
            each = r.get(f"each_{kind}")
            if isinstance(each, list) and each:
                got = statistics.quantiles([float(x) for x in each], n=100, method="inclusive")
                print(f"    {kind:4} per search p50 {got[49]:.2f} ms  p95 {got[94]:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
