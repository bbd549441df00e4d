"""RSS of the saved vector index once loaded, per checkout: what the service holds for it.

Issue 21: service + worker ≤ 300 MiB at 100k. The index's per-id Python dicts (id → text
hash, id → slot) were ~25 MB of the service's RSS at 100k; the text hashes now live in a
fixed-width array over slots. Per ``--root`` (a checkout: ``before`` = ``git archive`` of
``--before-ref``, ``after`` = this tree), a fresh process imports that checkout's
``workbench.recall.vectors``, imports FAISS and numpy (so their own cost is not counted),
then ``VectorIndex.load`` on ``--seeded``'s index and prints the RSS it added (after
``malloc_trim``, as the service does after a load) and the time the load took.

Figures only. The machine is shared: compare the rows of one run.

Usage::

    .venv/bin/python bench/index_memory.py --seeded /tmp/i21lat/seeded100k [--before-ref a8f0d7f]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import tree_at  # noqa: E402

CHILD = """
import ctypes, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import faiss, numpy
from workbench.recall import vectors
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
meta = next(m for m in Path(sys.argv[2]).glob("observations.*.json") if ".ids." not in m.name)
doc = json.loads(meta.read_text())
ctypes.CDLL("libc.so.6").malloc_trim(0)
before = rss()
began = time.perf_counter()
index, why = vectors.VectorIndex.load(Path(sys.argv[2]), doc["model"], doc["dim"], doc["kind"])
seconds = time.perf_counter() - began
assert index is not None, why
ctypes.CDLL("libc.so.6").malloc_trim(0)
print(json.dumps({"vectors": len(index), "added_mib": rss() - before, "load_s": seconds}))
"""


def measure(root: Path, index_dir: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(index_dir)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeded", type=Path, required=True, help="a data dir with an index")
    parser.add_argument("--before-ref", default="main")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    before = tree_at(args.before_ref)
    try:
        print(f"{'side':8}{'vectors':>9}{'RSS added MiB':>15}{'load s':>8}")
        for _ in range(args.repeat):
            for side, root in (("before", before), ("after", ROOT)):
                r = measure(root, args.seeded / "index")
                print(
                    f"{side:8}{r['vectors']:>9}{r['added_mib']:>15.1f}{r['load_s']:>8.2f}",
                    flush=True,
                )
    finally:
        shutil.rmtree(before.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
