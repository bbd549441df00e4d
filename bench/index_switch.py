"""A switch of ``vector_index`` (fp16 → hnsw_fp16 by default), before and after, in one run.

Issue 21's closing note: after a switch the old kind's files stayed in ``index/`` forever,
and while the new kind was filled from the embeddings cache searches saw a partial index. This
script:

1. seeds a data dir with ``--memories`` memories, all embedded by the static model (fast:
   the figures are about the index, not the model) and saved as a ``--from`` index;
2. records the reply by meaning of a few queries from that complete index;
3. for each side (``--before-root``, the base checkout, and this one), on a copy of the
   seeded dir: starts the service with ``vector_index=--to`` and, from the moment it answers
   until the new kind holds every memory, searches by meaning in a loop while sampling the
   service's RSS (``/proc``, every round); then stops it and lists ``index/``.

Figures per side: seconds from start until the ``--to`` index is complete; replies by meaning
answered, refused (semantic search still loading: a 400 saying so) and *partial* (not the
complete index's list); the service's RSS steady on the old kind (a restart on the seeded
dir), its peak sampled during the switch and steady after; the bytes left in ``index/`` by
other kinds of the model. Each side runs twice: searched (the loop above, one round of
queries every ``PACE_S``) and quiet (only the status polled: the switch's own time). No
embedding worker runs (every text is cached), so service = service + worker.

Usage: nice -n 10 python bench/index_switch.py [--memories 10000] [--from fp16]
       [--to hnsw_fp16] [--before-root /work/wt/base] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import free_port, progress, start_service, stop_service  # noqa: E402
from bench.ingest import request  # noqa: E402
from bench.search_targets import rss_mb  # noqa: E402
from workbench.models import ObservationDraft  # noqa: E402
from workbench.store import observations  # noqa: E402
from workbench.store.connection import atomic  # noqa: E402
from workbench.store.database import Store  # noqa: E402

WHAT = ["cache", "queue", "socket", "thumbnail", "webhook", "migration", "token", "parser"]
HOW = ["leaked", "timed out", "was retried", "deadlocked", "grew", "was rotated", "crashed"]
WHERE = ["in the worker", "behind the proxy", "during deploy", "on startup", "under load"]
WHO = ["billing", "search", "auth", "uploads", "reports", "mobile"]
PACE_S = 0.05  # between rounds of searches (and RSS samples)


def titles(n: int) -> list[str]:
    return [
        f"{WHO[i % 6]} {WHAT[i // 6 % 8]} {HOW[i // 48 % 7]} {WHERE[i // 336 % 5]} (#{i})"
        for i in range(n)
    ]


def get(port: int, path: str) -> tuple[int, Any]:
    return request(port, "GET", path)


def by_meaning(port: int, query: str) -> tuple[int, list[int]]:
    q = urllib.parse.urlencode({"query": query, "mode": "vector", "format": "json", "limit": 20})
    status, body = get(port, f"/api/search?{q}")
    return status, [h["id"] for h in body.get("observations", [])] if status == 200 else []


def complete(port: int, n: int) -> dict[str, Any] | None:
    status, body = get(port, "/api/index/status")
    done = (
        status == 200
        and body["state"] == "ready"
        and body["indexed"] == n
        and body["pending"] == 0
        and not body.get("switching")
    )
    return body if done else None


def wait_complete(port: int, n: int, timeout: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = complete(port, n)
        if body is not None:
            return body
        time.sleep(0.1)
    raise SystemExit(f"the index never held {n} memories in {timeout:.0f} s")


def seed(folder: Path, n: int, kind: str, env: dict[str, str]) -> tuple[Path, list[str]]:
    """A data dir of ``n`` memories saved as a ``kind`` index, and the queries to ask it."""
    data = folder / "seeded"
    data.mkdir()
    names = titles(n)
    with Store(data / "workbench.db") as store, atomic(store.conn):
        for title in names:
            draft = ObservationDraft(title=title)
            observations.insert(store.conn, draft, content_session_id="s", project="p")
    port = free_port()
    proc = start_service(data, port, log=folder / "seed.log", WORKBENCH_VECTOR_INDEX=kind, **env)
    try:
        wait_complete(port, n)
    finally:
        stop_service(proc, 60)
    return data, [names[-1], names[n // 2], "token rotated behind the proxy"]


def side(
    root: Path, seeded: Path, folder: Path, n: int, kind: str, env: dict[str, str], ref: Any
) -> dict[str, Any]:
    """One switch on a copy of ``seeded``, searched by ``ref``'s queries (none: quiet)."""
    data = folder / f"data-{free_port()}"
    shutil.copytree(seeded, data)
    port = free_port()
    started = time.monotonic()
    proc = start_service(
        data, port, root=root, log=folder / f"service-{port}.log", wait_s=120,
        WORKBENCH_VECTOR_INDEX=kind, **env,
    )  # fmt: skip
    answered = refused = partial = 0
    peak = 0.0
    body = None
    try:
        while body is None and time.monotonic() - started < 600:
            peak = max(peak, rss_mb(proc.pid))
            time.sleep(PACE_S)
            for query, want in ref.items():
                status, got = by_meaning(port, query)
                if status != 200:
                    refused += 1
                    continue
                answered += 1
                partial += got != want
            body = complete(port, n)
        took = time.monotonic() - started
        time.sleep(2.0)
        after = rss_mb(proc.pid)
    finally:
        stop_service(proc, 60)
    model = body["embedder"] if body else "?"
    left = [
        p
        for p in (data / "index").iterdir()
        if f".{model}." in p.name and f".{kind}." not in p.name
    ]
    orphans = sum(p.stat().st_size for p in left)
    shutil.rmtree(data, ignore_errors=True)
    return {
        "complete_s": round(took, 2),
        "answered": answered,
        "refused": refused,
        "partial": partial,
        "rss_peak": round(peak, 1),
        "rss_after": round(after, 1),
        "orphan_files": len(left),
        "orphan_mb": round(orphans / 2**20, 2),
        "memory_bytes": body["memoryBytes"] if body else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--from", dest="old", default="fp16")
    parser.add_argument("--to", dest="new", default="hnsw_fp16")
    parser.add_argument("--before-root", type=Path, default=Path("/work/wt/base"))
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    env = {"WORKBENCH_EMBEDDER": "static"}
    folder = Path(tempfile.mkdtemp(prefix="wb-index-switch-"))
    try:
        progress(f"seeding {args.memories} memories as a {args.old} index")
        seeded, queries = seed(folder, args.memories, args.old, env)
        port = free_port()
        proc = start_service(seeded, port, WORKBENCH_VECTOR_INDEX=args.old, **env)
        try:  # the complete old index: the reference replies, and its service's RSS
            wait_complete(port, args.memories)
            ref = {q: by_meaning(port, q)[1] for q in queries}
            time.sleep(2.0)
            steady = rss_mb(proc.pid)
        finally:
            stop_service(proc, 60)
        sides = {"before": args.before_root.resolve(), "after": ROOT}
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
        for r in range(args.rounds):
            for name, root in sides.items():  # interleaved: both sides see the same load
                progress(f"round {r + 1}: {name} ({root}) switches {args.old} → {args.new}")
                row = side(root, seeded, folder, args.memories, args.new, env, ref)
                quiet = side(root, seeded, folder, args.memories, args.new, env, {})
                row["quiet_s"] = quiet["complete_s"]
                row["quiet_peak"] = quiet["rss_peak"]
                rows[name].append(row)
        print(
            f"{args.memories} memories, static embedder (256-d), {args.old} → {args.new}; "
            f"service RSS steady on {args.old}: {steady:.1f} MiB; loadavg {os.getloadavg()}"
        )
        keys = list(rows["before"][0])
        print(f"{'figure':<14}" + "".join(f"{name:>24}" for name in rows))
        for key in keys:
            cells = [" / ".join(str(row[key]) for row in rows[name]) for name in rows]
            print(f"{key:<14}" + "".join(f"{cell:>24}" for cell in cells))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
