"""The embedding worker's start over a store whose vectors are all there, before vs after.

Issue 21 ("noticed, left alone" at stop 27): a service restarted over 100k memories started
its worker from id 0, and the worker read and hashed every row to find nothing missing: over
100 s at 100k on a loaded box, taken from the hooks' CPU. After: the indexer's first pass
says what is behind and the worker starts there (``plan_start``).

Per scenario (``quiet``, ``busyN`` = N CPU burners as in bench/vectors_catch_up.py) and side
(``before`` = ``--before-ref``'s tree via ``git archive``, ``after`` = this tree), on a copy
of ``--seeded`` (a data dir with full vectors: /tmp/i21lat/seeded100k):

1. a real service (``WORKBENCH_EMBEDDER=minilm``) starts; the clock starts at its health;
2. every 0.2 s ``/api/index/status``: seconds until the worker has said ``idle`` (its scan
   done), its ``--from-id``, and its CPU seconds then (``/proc/<pid>/stat``);
3. then until the worker is ``asleep`` (``embed_worker_linger_s`` after idle; capped at
   ``--sleep-wait``), ten vector searches, and RSS of the service (and worker, if any).

Figures only, never assertions. The machine is shared: compare columns of one run only.

Usage::

    .venv/bin/python bench/worker_startup.py --seeded /tmp/i21lat/seeded100k
        [--before-ref a8f0d7f] [--burners 0 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embed_backfill import rss  # noqa: E402
from bench.harness import burners, seeded_service, tree_at  # noqa: E402
from bench.ingest import request  # noqa: E402


def cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def from_id(pid: int) -> int | None:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        return int(argv[argv.index(b"--from-id") + 1])
    except (OSError, ValueError, IndexError):
        return None


def worker(port: int) -> dict[str, Any]:
    status = request(port, "GET", "/api/index/status")[1]
    assert isinstance(status, dict)
    return status.get("worker") or {}


def one_side(root: Path, seeded: Path, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"idle_s": None, "from_id": None, "worker_cpu_s": None}
    with seeded_service(
        seeded, folder, root=root, WORKBENCH_EMBEDDER="minilm", WORKBENCH_COMPRESSOR="offline"
    ) as port:
        began = time.monotonic()
        pid = None
        while time.monotonic() - began < args.max_wait:
            w = worker(port)
            pid = w.get("pid") or pid
            if pid and out["from_id"] is None:
                out["from_id"] = from_id(int(pid))
            if pid:
                cpu = cpu_seconds(int(pid))
                out["worker_cpu_s"] = round(cpu, 1) if cpu is not None else out["worker_cpu_s"]
            if w.get("state") in ("idle", "asleep"):
                out["idle_s"] = round(time.monotonic() - began, 1)
                break
            time.sleep(0.2)
        until = time.monotonic() + args.sleep_wait
        while worker(port).get("state") != "asleep" and time.monotonic() < until:
            time.sleep(0.5)
        for n in range(10):
            request(port, "GET", f"/api/search?query=webhook+retry+{n}&mode=hybrid&format=json")
        out["asleep"] = worker(port).get("state") == "asleep"
        out["rss"] = rss(port)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeded", type=Path, required=True)
    parser.add_argument("--before-ref", default="main")
    parser.add_argument("--burners", type=int, nargs="*", default=[0, 4])
    parser.add_argument("--max-wait", type=float, default=300.0)
    parser.add_argument("--sleep-wait", type=float, default=60.0)
    args = parser.parse_args()
    sides = {"before": tree_at(args.before_ref), "after": ROOT}
    print(
        f"{'scenario':9}{'side':7}{'idle s':>8}{'from-id':>9}{'wkr CPU s':>10}"
        f"{'asleep':>7}  RSS service+worker MiB",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="wb-worker-startup-") as tmp:
        try:
            run_all(sides, args, Path(tmp))
        finally:
            shutil.rmtree(sides["before"].parent, ignore_errors=True)
    print(f"load average at the end: {os.getloadavg()}")


def run_all(sides: dict[str, Path], args: argparse.Namespace, tmp: Path) -> None:
    """Every scenario, both sides, a row each as it ends."""
    for count in args.burners:
        scenario = "quiet" if count == 0 else f"busy{count}"
        for side, root in sides.items():
            with burners(count):
                r = one_side(root, args.seeded, tmp, args)
            m = r.get("rss") or {}
            print(
                f"{scenario:9}{side:7}{r['idle_s']!s:>8}{r['from_id']!s:>9}"
                f"{r['worker_cpu_s']!s:>10}{r.get('asleep')!s:>7}  "
                f"{m.get('service_mib')}+{m.get('worker_mib')}",
                flush=True,
            )


if __name__ == "__main__":
    main()
