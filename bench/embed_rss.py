"""Service + embedding-worker RSS at 100k memories with full vectors, before vs after. Prints it.

Issue 21: service + worker ≤ 300 MiB at 100k with full vectors (last stop: 318 MiB for the
service once the worker slept, before an 18 MiB index saving that was never measured on the
whole service).

Per side (``before`` = ``--before``'s checkout, e.g. /work/wt/base; ``after`` = this tree; the
same venv), each with its own ONNX MiniLM (``--before-models`` / ``--after-models``: folders
holding ``minilm-l6-v2-int8`` and ``minilm-static-256``, as ``workbench models build`` writes
them):

1. a copy of ``--seeded`` (a 100k data dir with full vectors; never modified in place);
2. a side whose model has another name than the one the copy's vectors were made with (a new
   build: its name carries the model's sha256 and token cut) would embed all 100k again
   first. RSS does not depend on the vectors' values, so the copy's vectors are *relabelled*
   to the side's model name (``embeddings.model``, the index files and their meta) and the
   figures stay comparable; recall of the new build is measured in bench/embed_recall.py;
3. the real service starts (``WORKBENCH_EMBEDDER=minilm``); once the index is ready with every
   memory, RSS (``/proc``: VmRSS and the peak VmHWM) of the service and, while it lives, of its
   embedding worker; then ``--searches`` hybrid searches (the query embedder loaded and
   used), RSS again; then ``--new`` memories are saved and embedded (the worker alive: it
   starts, or wakes, for them), RSS again; then the worker's exit once idle
   (``embed_worker_linger_s``), RSS again. ``--smaps`` prints the largest mappings.

The sides alternate ``--rounds`` times. Figures only: the box is shared, compare one run's
columns.

Usage::

    .venv/bin/python bench/embed_rss.py --seeded /tmp/i21lat/seeded100k --before /work/wt/base \\
        --before-models /work/wt/base/.venv/share/workbench --after-models DIR [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embed_backfill import rss_mib, status_mib  # noqa: E402
from bench.harness import health, progress, seeded_service  # noqa: E402
from bench.ingest import request  # noqa: E402

QUERIES = [
    "stripe webhook retries duplicate refunds",
    "why did the thumbnail worker leak memory",
    "how do we rotate the payments api token",
    "flaky test in the review build",
    "database migration that locked the table",
]


def model_name(root: Path, onnx_dir: Path) -> str:
    """The name the side's code gives its ONNX MiniLM (the cache key of its vectors)."""
    code = (
        f"import sys; sys.path.insert(0, {str(root)!r}); from pathlib import Path; "
        "from workbench.recall.embed import OnnxEmbedder; "
        f"print(OnnxEmbedder(Path({str(onnx_dir)!r}), threads=1).name)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return out.stdout.strip().splitlines()[-1]


def relabel(data: Path, name: str) -> str:
    """Give the copy's vectors the model name ``name``; return the name they had."""
    index = data / "index"
    meta_path = next(p for p in index.glob("observations.*.json") if ".ids." not in p.name)
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    old = str(meta["model"])
    if old == name:
        return old
    for path in list(index.glob(f"observations.{old}.*")):
        path.rename(path.with_name(path.name.replace(old, name)))
    meta["model"] = name
    meta_path = index / meta_path.name.replace(old, name)
    meta_path.write_text(json.dumps(meta, separators=(",", ":")), encoding="utf-8")
    with sqlite3.connect(data / "workbench.db") as conn:
        conn.execute("UPDATE embeddings SET model = ? WHERE model = ?", (name, old))
    return old


def hwm_mib(pid: int | None) -> float | None:
    return status_mib(pid, "VmHWM")


def snapshot(port: int) -> dict[str, Any]:
    h = health(port, timeout=10.0) or {}
    service = h.get("pid")
    worker = (h.get("vectors") or {}).get("pid")
    return {
        "service": rss_mib(service),
        "service_peak": hwm_mib(service),
        "worker": rss_mib(worker),
        "worker_peak": hwm_mib(worker),
    }


def print_smaps(label: str, port: int, top: int = 12) -> None:
    """The largest mappings (Rss, kB) of the service and its worker: where the MiB go."""
    h = health(port, timeout=10.0) or {}
    for who, pid in (("service", h.get("pid")), ("worker", (h.get("vectors") or {}).get("pid"))):
        if not pid:
            continue
        sizes: dict[str, int] = {}
        name = ""
        try:
            lines = Path(f"/proc/{pid}/smaps").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:
                name = head[5] if len(head) > 5 else "[anon]"
            elif head and head[0] == "Rss:":
                sizes[name] = sizes.get(name, 0) + int(head[1])
        progress(f"{label}: {who} {pid}, top mappings (MiB):")
        for mapped, kb in sorted(sizes.items(), key=lambda kv: -kv[1])[:top]:
            progress(f"  {kb / 1024:8.1f}  {mapped}")


def one_side(root: Path, models: Path, seeded: Path, tmp: Path, args: Any) -> dict[str, Any]:
    onnx_dir, static_dir = models / "minilm-l6-v2-int8", models / "minilm-static-256"
    name = model_name(root, onnx_dir)
    out: dict[str, Any] = {"model": name}
    with seeded_service(
        seeded,
        tmp,
        root=root,
        prepare=partial(relabel, name=name),
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_COMPRESSOR="offline",
        WORKBENCH_ONNX_MODEL_DIR=str(onnx_dir),
        WORKBENCH_STATIC_MODEL_DIR=str(static_dir),
    ) as port:
        until = time.monotonic() + 600
        while time.monotonic() < until:
            status = request(port, "GET", "/api/index/status")[1]
            if isinstance(status, dict) and status.get("state") == "ready":
                if int(status.get("indexed") or 0) >= 100_000:
                    break
            time.sleep(1.0)
        out["ready"] = snapshot(port)
        for n in range(args.searches):
            query = urllib.parse.urlencode(
                {"query": QUERIES[n % len(QUERIES)], "mode": "hybrid", "format": "json"}
            )
            request(port, "GET", f"/api/search?{query}")
        out["searched"] = snapshot(port)
        if args.smaps:
            print_smaps(f"{root.name} after searches", port)
        # New memories arrive (a session's hooks): the worker starts (or wakes), embeds them
        # and stays idle for embed_worker_linger_s: the figure while a worker is alive.
        for n in range(args.new):
            body = {"title": f"rss bench note {n}", "text": QUERIES[n % len(QUERIES)] + f" #{n}"}
            request(port, "POST", "/api/memory/save", {**body, "project": "rss-bench"})
        until = time.monotonic() + 300
        while time.monotonic() < until:
            vectors = (health(port, timeout=10.0) or {}).get("vectors") or {}
            worker = vectors.get("worker") or {}
            if vectors.get("behind") == 0 and int(worker.get("embedded") or 0) >= args.new:
                break
            time.sleep(0.5)
        out["embedded"] = snapshot(port)
        if args.smaps:
            print_smaps(f"{root.name} worker alive", port)
        until = time.monotonic() + args.worker_wait
        while time.monotonic() < until and snapshot(port)["worker"] is not None:
            time.sleep(1.0)
        out["worker_gone"] = snapshot(port)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeded", type=Path, required=True)
    parser.add_argument("--before", type=Path, required=True, help="the before side's checkout")
    parser.add_argument("--before-models", type=Path, required=True)
    parser.add_argument("--after-models", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--worker-wait", type=float, default=120.0)
    parser.add_argument("--new", type=int, default=64, help="memories saved after searching")
    parser.add_argument("--smaps", action="store_true", help="print the largest mappings")
    args = parser.parse_args()
    sides = {"before": (args.before, args.before_models), "after": (ROOT, args.after_models)}
    rows: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="embed-rss-") as tmp:
        for n in range(args.rounds):
            for side, (root, models) in sides.items():
                progress(f"round {n + 1}: {side}")
                rows.append((side, one_side(root, models, args.seeded, Path(tmp), args)))

    def cell(s: dict[str, Any]) -> str:
        total = (s["service"] or 0) + (s["worker"] or 0)
        return f"{s['service']}+{s['worker'] or 0}={total:.0f} (peak {s['service_peak']})"

    print(
        "RSS MiB at 100k, full vectors: service+worker=sum (service VmHWM); a shared, loaded "
        "2-core box: compare within this run"
    )
    print(
        f"{'side':7} {'model':32} {'index ready':28} {'after searches':28} "
        f"{'new memories embedded':28} {'worker exited':28} {'worker peak':11}"
    )
    for side, r in rows:
        print(
            f"{side:7} {r['model']:32} {cell(r['ready']):28} {cell(r['searched']):28} "
            f"{cell(r['embedded']):28} {cell(r['worker_gone']):28} "
            f"{r['embedded']['worker_peak'] or 0:<11}"
        )


if __name__ == "__main__":
    main()
