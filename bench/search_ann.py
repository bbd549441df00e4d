"""Does an approximate (graph) vector index change what ``/api/search`` answers? Prints figures.

Issue 21: the exact fp16 scan is the largest CPU stage of a hybrid search at 100k. A graph
(``vector_index=hnsw_fp16``) is faster but approximate, and it must not change what users get.
This compares, through the real service, hybrid top-10 replies of an exact side
(``vector_index=fp16``) with one or more approximate sides, on copies of one seeded store:

1. copies ``--seeded`` (a 100k data dir a ``bench/search.py --keep`` run seeded; never written)
   and, in the copy, moves observations into three projects holding ~1%, ~10% and ~50% of
   them (``sel1``/``sel10``/``sel50``, by id modulo 100; the edit log is cleared, so no vector
   is embedded again: the text, and so its cached vector, is unchanged);
2. starts one real service per side on its own copy of that, waits until its index holds
   every vector (an approximate side builds its graph from the embeddings cache: the time is
   printed), and reads its RSS;
3. per scope (no filter, then each project), asks every side the same ``--queries`` new
   queries (``bench.search.queries``), hybrid, ``format=json``, top 10, and prints: the share
   of replies identical to the exact side's (ids and order), the mean top-10 id overlap, and
   the share whose first hit is the same;
4. the CPU per request of each side (the scheduler's time of the service's threads).

Usage: python bench/search_ann.py --seeded /tmp/wb-seeded [--queries 150]
       [--side "vector_index=hnsw_fp16&vector_graph_ef=1024"]...
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    free_port,
    progress,
    settings_spec,
    start_service,
    stop_service,
)
from bench.search_targets import Side, rss_mb, scheduled_ns, wait_indexed  # noqa: E402

SCOPES = {"no filter": None, "~50% project": "sel50", "~10% project": "sel10"}
SCOPES["~1% project"] = "sel1"


def relabel(db: Path) -> dict[str, int]:
    """Move observations into projects of ~1%, ~10% and ~50% (in this copy only)."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute("UPDATE observations SET project = 'sel1' WHERE id % 100 = 0")
            conn.execute(
                "UPDATE observations SET project = 'sel10' WHERE id % 100 BETWEEN 1 AND 10"
            )
            conn.execute(
                "UPDATE observations SET project = 'sel50' WHERE id % 100 BETWEEN 50 AND 99"
            )
            conn.execute("DELETE FROM observation_edits")  # same text, same cached vector
        rows = conn.execute("SELECT project, count(*) FROM observations GROUP BY 1").fetchall()
    finally:
        conn.close()
    return {str(p): int(c) for p, c in rows}


def ids_of(reply: Any) -> list[int]:
    return [int(h["id"]) for h in reply["observations"]]


def main(argv: list[str] | None = None) -> int:
    from bench.search import queries

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeded", required=True, help="a seeded 100k data dir (copied)")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--side", action="append", default=[], help="approximate side settings")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    specs = [("exact (fp16)", "vector_index=fp16")]
    specs += [(spec, spec) for spec in args.side or ["vector_index=hnsw_fp16"]]
    work = Path(tempfile.mkdtemp(prefix="wb-bench-ann-"))
    sides: list[Side] = []
    lines: list[str] = []
    try:
        template = work / "template"
        shutil.copytree(Path(args.seeded), template, ignore=shutil.ignore_patterns("*.log"))
        counts = relabel(template / "workbench.db")
        n = sum(counts.values())
        lines.append(f"{n:,} observations; projects: {counts}")
        for k, (name, spec) in enumerate(specs):
            data = work / f"side{k}"
            # every side builds its index from the cache: a saved one holds the old projects
            shutil.copytree(template, data, ignore=shutil.ignore_patterns("index"))
            (data / "settings.json").write_text(json.dumps(settings_spec(spec)), encoding="utf-8")
            sides.append(Side(name, ROOT, data))
        for side in sides:
            progress(f"starting {side.name}")
            side.port = free_port()
            side.proc = start_service(
                side.data,
                side.port,
                log=side.data / "service.log",
                wait_s=300.0,
                WORKBENCH_COMPRESSOR="offline",
                WORKBENCH_EMBEDDER="minilm",
            )
            side.conn = http.client.HTTPConnection("127.0.0.1", side.port, timeout=120)
            seconds = wait_indexed(side, n)
            lines.append(
                f"{side.name}: index full {seconds:.1f} s after the service answered;"
                f" RSS {rss_mb(side.proc.pid):.0f} MiB"
            )
        gen = random.Random(21)
        lines.append("")
        lines.append(f"load average at start {os.getloadavg()[0]:.2f}")
        header = f"{'scope':16}{'side':48}{'identical':>10}{'overlap@10':>12}{'same 1st':>10}"
        lines.append(header)
        cpu = {s.name: 0.0 for s in sides}
        asked = 0
        for scope, project in SCOPES.items():
            texts = queries(args.queries, gen)
            replies: dict[str, list[list[int]]] = {s.name: [] for s in sides}
            for q in texts:
                params: dict[str, Any] = {"query": q, "format": "json", "limit": 10}
                if project:
                    params["project"] = project
                for side in sides:
                    assert side.proc is not None
                    before = scheduled_ns(side.proc.pid)[0]
                    replies[side.name].append(ids_of(json.loads(side.get("/api/search", params))))
                    cpu[side.name] += (scheduled_ns(side.proc.pid)[0] - before) / 1e9
                asked += 1
            base = replies[sides[0].name]
            for side in sides[1:]:
                got = replies[side.name]
                same = statistics.mean(a == b for a, b in zip(base, got, strict=True))
                overlap = statistics.mean(
                    len(set(a) & set(b)) / max(len(a), 1) for a, b in zip(base, got, strict=True)
                )
                first = statistics.mean(a[:1] == b[:1] for a, b in zip(base, got, strict=True))
                lines.append(f"{scope:16}{side.name:48}{same:>10.3f}{overlap:>12.3f}{first:>10.3f}")
        lines.append(f"load average at end {os.getloadavg()[0]:.2f}")
        lines.append("")
        lines.append("service CPU per hybrid request (ms, all scopes; schedstat, every thread):")
        for side in sides:
            lines.append(f"  {side.name:48}{1000 * cpu[side.name] / asked:8.2f}")
    finally:
        for side in sides:
            if side.proc is not None:
                stop_service(side.proc, timeout=60)
        if args.keep:
            progress(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
