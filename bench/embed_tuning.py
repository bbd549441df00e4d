"""MiniLM (ONNX int8) documents per second in the embedding worker's shoes, per setting.

Issue 21: full MiniLM vectors for a 100k history took ~40 min quiet and ~80 busy. Which of
ONNX Runtime's intra-op threads, the texts per call (``ONNX_BATCH``; texts are sorted by
length first, so padding is small either way), the token cut and the worker's niceness buy
texts/s, quiet and with ``--burners`` CPU burners (bench/harness.burners)?

Each setting runs in a fresh child process started in a session of its own and niced like the
worker (the kernel's autogroup scheduling shares the CPU between sessions, so this is how the
worker competes with other programs when the service is idle). The child loads the model,
then embeds the demo observations' texts (each made unique, as bench/embed_backfill.py does)
for ``--seconds`` and prints texts/s and the CPU it spent per text (ms, all its threads:
what the embedding costs the machine, whatever else runs). Figures only; the box is shared:
compare rows of one run.

``--root DIR`` (repeatable) runs each setting under each checkout in turn, so an embedder
change is measured before and after under the same load (e.g. ``--root /work/wt/base
--root .``). ``--models DIR`` (repeatable, one per ``--root``, in order) gives that checkout the
ONNX model in ``DIR/minilm-l6-v2-int8`` (as ``workbench models build --into`` writes it), for a
change to the model itself; without it every checkout runs this venv's.

What it showed for the lanes (issue 21, stop 33; ``--threads-only --burners 0 2``): see
``OnnxEmbedder``'s docstring in workbench/recall/embed.py.

Usage::

    .venv/bin/python bench/embed_tuning.py [--burners 0 4] [--seconds 15] [--root DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import burners  # noqa: E402

# (threads, batch, max tokens, nice); threads 0 = the worker's choice: one per spare core
# measured at start (workbench.recall.cpu_share), as the embedding worker now does
SETTINGS = [
    (1, 4, 128, 10),  # the worker before it measured the spare cores
    (0, 4, 128, 10),  # the worker now
    (1, 16, 128, 10),
    (1, 32, 128, 10),
    (2, 4, 128, 10),
    (2, 16, 128, 10),
    (1, 16, 64, 10),
    (1, 16, 128, 0),
]

CHILD = """
import json, os, resource, sys, time
threads, batch, tokens, nice, seconds = (float(a) for a in sys.argv[1:6])
os.nice(int(nice))
sys.path.insert(0, sys.argv[6])
from bench.embed_backfill import document
from workbench.recall import embed, vectors
embed.ONNX_BATCH = int(batch)
if not threads:
    from workbench.recall.cpu_share import spare_now, threads_for
    spare = spare_now()
    threads = threads_for(spare, os.cpu_count() or 1) if spare is not None else 1
model = embed.OnnxEmbedder(threads=int(threads), max_tokens=int(tokens))
texts = [vectors.embed_text(o) for o in document(4096)["observations"]]
model.embed(texts[:8])
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
done, start, n, cpu0 = 0, time.perf_counter(), 0, cpu()
while time.perf_counter() - start < seconds:
    chunk = texts[n % len(texts) : n % len(texts) + 64]
    model.embed(chunk)
    done += len(chunk)
    n += 64
print(json.dumps({"rate": done / (time.perf_counter() - start), "threads": int(threads),
                  "cpu_ms": 1000 * (cpu() - cpu0) / done}))
"""


def measure(
    setting: tuple[int, int, int, int],
    seconds: float,
    root: Path = ROOT,
    models: Path | None = None,
) -> str:
    """One child's ``texts/s (CPU ms per text)`` for ``setting`` with ``root``'s code (and
    the ONNX model in ``models``, when given)."""
    args = [str(v) for v in (*setting, seconds)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    if models is not None:
        env["WORKBENCH_ONNX_MODEL_DIR"] = str(models / "minilm-l6-v2-int8")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *args, str(root)],
        env=env,
        cwd=str(root),
        capture_output=True,
        text=True,
        timeout=seconds + 120,
        start_new_session=True,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    chosen = f" ({result['threads']}t)" if not setting[0] else ""
    return f"{result['rate']:8.1f}{chosen} ({result['cpu_ms']:.2f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--burners", type=int, nargs="*", default=[0, 4])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--threads-only", action="store_true", help="1, 2 and auto threads only")
    parser.add_argument("--root", action="append", type=Path, help="a checkout (repeatable)")
    parser.add_argument(
        "--models", action="append", type=Path, help="a model folder per --root (repeatable)"
    )
    args = parser.parse_args()
    roots = [r.resolve() for r in args.root] if args.root else [ROOT]
    if args.models and len(args.models) != len(roots):
        parser.error("give one --models per --root, in the same order")
    models = dict(zip(roots, args.models or [None] * len(roots), strict=True))
    settings = [s for s in SETTINGS if not args.threads_only or s[1:] == (4, 128, 10)]
    header = " | ".join(f"busy{b} texts/s (CPU/text)" for b in args.burners)
    print("root" + " " * 24 + "threads batch tokens nice | " + header)
    rows: dict[tuple[Path, tuple[int, int, int, int]], list[str]] = {
        (r, s): [] for s in settings for r in roots
    }
    for count in args.burners:
        with burners(count):
            load = os.getloadavg()[0]
            for setting in settings:
                for root in roots:  # interleaved: each checkout sees the same load
                    rows[(root, setting)].append(measure(setting, args.seconds, root, models[root]))
            print(f"(busy{count}: load average {max(load, os.getloadavg()[0]):.1f})", flush=True)
    for (root, setting), cells in rows.items():
        threads, batch, tokens, nice = setting
        shown = str(threads) if threads else "auto"
        where = str(root)[-27:]
        print(f"{where:<27} {shown:>7} {batch:5d} {tokens:6d} {nice:4d} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
