"""``workbench search | timeline | show`` as fresh processes, two checkouts side by side.

Issue 21's target: ``workbench search`` as a process ≤ 300 ms (with the service up, at 100k
with full vectors); ``timeline`` and ``show`` are the same kind of command. One run:

1. starts each side's real service (``--root A --root B``: each checkout's own code) on a
   copy of ``--seeded`` (a data dir with full vectors, e.g. ``/tmp/i21lat/seeded100k_v2``;
   the original is never written), and waits until its vector index holds every observation
   and nothing is behind;
2. per command form, runs ``--runs`` fresh processes per side, alternating the sides run by
   run so load hits both alike (``python -c "from workbench.cli.main import run; run()"``,
   the entry point's code, with ``PYTHONPATH`` at the side's checkout), stdout a pipe as an
   agent reads it, the table width rich picks for a pipe;
3. prints per form and side: wall p50 / p95 (what a person waits; on a loaded box mostly
   waiting for a CPU) and the process's own CPU (user + sys, from the kernel's rusage of
   the child: what the code costs, nearly independent of load), the box's load average
   beside them; and whether both sides printed the same bytes (they serve copies of one
   store: a change that only makes a command faster must not change what it prints).

Figures, never assertions. Usage:
  python bench/cli_process.py --root /work/wt/base --root . --seeded DIR [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import health, hook_env, progress, seeded_service  # noqa: E402

CLI_SOURCE = "from workbench.cli.main import run; run()"
TARGET_MS = 300.0  # issue 21: `workbench search` as a process


def forms(rng: random.Random, top: int) -> dict[str, list[list[str]]]:
    """Each command form, with ``runs`` argument lists (the same lists on every side)."""
    from bench.search import queries

    qs = queries(200, rng)
    return {
        "search <words>": [[q] for q in qs],
        "search <words> --json": [[q, "--json"] for q in qs],
        "timeline <id>": [[str(rng.randint(1, top))] for _ in qs],
        "timeline -q <words>": [["-q", q] for q in qs],
        "show <id> <id>": [[str(rng.randint(1, top)), str(rng.randint(1, top))] for _ in qs],
    }


def timed(root: Path, data: Path, port: int, args: list[str]) -> tuple[float, float, bytes]:
    """One fresh process: (wall ms, CPU ms, stdout)."""
    env = hook_env(data, port, PYTHONPATH=str(root))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CLI_SOURCE, *args], env=env, cwd=data.parent, capture_output=True
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if done.returncode != 0 or b"not running" in done.stderr:
        raise RuntimeError(f"{root}: workbench {args} failed: {done.stderr[-500:]!r}")
    return wall, cpu, done.stdout


@contextmanager
def side(root: Path, seeded: Path, folder: Path, top: int) -> Iterator[tuple[int, Path]]:
    """``root``'s service on a copy of ``seeded``: (port, data dir), once its index holds a
    vector for each of the ``top`` observations and nothing is behind."""
    made: list[Path] = []
    with seeded_service(seeded, folder, root=root, prepare=made.append) as port:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            found = health(port, timeout=5.0) or {}
            embeddings = found.get("embeddings") or {}
            behind = (found.get("vectors") or {}).get("behind", 1)
            if embeddings.get("state") == "ready" and embeddings.get("indexed", 0) >= top:
                if behind == 0:
                    break
            time.sleep(1.0)
        else:
            raise RuntimeError(f"{root}: vectors not ready within 600 s")
        yield port, made[0]


def p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", action="append", required=True, help="a checkout (twice)")
    parser.add_argument("--seeded", required=True, help="a data dir with full vectors (copied)")
    parser.add_argument("--runs", type=int, default=20, help="processes per form and side")
    args = parser.parse_args(argv)
    roots = [Path(r).resolve() for r in args.root]
    db = sqlite3.connect(f"file:{Path(args.seeded) / 'workbench.db'}?mode=ro", uri=True)
    top, count = db.execute("SELECT max(id), count(*) FROM observations").fetchone()
    db.close()
    cases = {name: lists[: args.runs] for name, lists in forms(random.Random(21), top).items()}
    with tempfile.TemporaryDirectory(prefix="wb-bench-cli-") as tmp, ExitStack() as stack:
        sides = []
        for root in roots:
            progress(f"starting {root}'s service on a copy of {args.seeded}")
            found = stack.enter_context(side(root, Path(args.seeded), Path(tmp), count))
            sides.append((root, *found))
        loads = [os.getloadavg()[0]]
        rows = []
        for name, lists in cases.items():
            progress(f"{name}: {len(lists)} processes per side")
            walls: dict[Path, list[float]] = {root: [] for root in roots}
            cpus: dict[Path, list[float]] = {root: [] for root in roots}
            same = 0
            for k, extra in enumerate(lists):
                command = name.split()[0]
                outs = set()
                for root, port, data in sides if k % 2 == 0 else sides[::-1]:
                    wall, cpu, out = timed(root, data, port, [command, *extra])
                    walls[root].append(wall)
                    cpus[root].append(cpu)
                    outs.add(out)
                same += len(outs) == 1
            loads.append(os.getloadavg()[0])
            rows.append((name, walls, cpus, same, len(lists)))
    print(
        f"\nworkbench commands as fresh processes, service up, {count:,} observations with full"
        f" vectors; load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
        " (the box is shared with other benches: compare columns of this run only)"
    )
    head = "".join(f"{root.name + ' wall p50/p95':>26}{'CPU p50/p95':>16}" for root in roots)
    print(f"{'command':24}{head}  same output")
    for name, walls, cpus, same, n in rows:
        cells = "".join(
            f"{f'{statistics.median(walls[r]):.0f} / {p(walls[r], 95):.0f}':>26}"
            f"{f'{statistics.median(cpus[r]):.0f} / {p(cpus[r], 95):.0f}':>16}"
            for r in roots
        )
        print(f"{name:24}{cells}  {same} of {n}")
    print(f"target: workbench search as a process ≤ {TARGET_MS:g} ms (issue 21)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
