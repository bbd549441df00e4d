"""Hook latency of two checkouts side by side, interleaved, each against its own live service.

``bench/hooks.py`` measures one checkout; comparing two runs of it taken minutes apart on a
shared 2-core machine mostly measures the machine. Here both services run at once (each on its
own temporary data dir and free port, the same embedder) and every timed hook run of one
checkout is followed by the same run of the other, so background noise lands on both columns.

Typical use, with the older commit checked out beside this one::

    git worktree add --detach /tmp/before <commit>
    .venv/bin/python bench/hooks_ab.py --before /tmp/before --after .

Figures, not assertions (STYLE lesson 20).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, hook_env, start_service, stop_service  # noqa: E402

PYTHON = sys.executable
CASES = (
    ("PostToolUse (Edit)", "post_tool_use.py", "post_tool_use_edit.json"),
    ("UserPromptSubmit", "user_prompt_submit.py", "user_prompt_submit.json"),
    ("SessionStart (startup)", "session_start.py", "session_start_startup.json"),
)


class Checkout:
    """One checkout's service (started here) and the environment its hooks run with."""

    def __init__(self, root: Path, embedder: str) -> None:
        self.root = root.resolve()
        self.data_dir = Path(tempfile.mkdtemp(prefix="wb-hooks-ab-"))
        self.port = free_port()
        self.env = hook_env(self.data_dir, self.port, WORKBENCH_EMBEDDER=embedder)
        self.embedder = embedder
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """This checkout's service, once its health answers."""
        self.proc = start_service(
            self.data_dir, self.port, root=self.root, WORKBENCH_EMBEDDER=self.embedder
        )

    def run_hook(self, script: str, fixture: str) -> float:
        payload = (self.root / "tests" / "fixtures" / "hooks" / fixture).read_bytes()
        start = time.perf_counter()
        subprocess.run(
            [PYTHON, "-S", str(self.root / "hooks" / script)],
            input=payload,
            env=self.env,
            capture_output=True,
            check=False,
        )
        return (time.perf_counter() - start) * 1000

    def spooled(self) -> int:
        spool = self.data_dir / "spool"
        return len(list(spool.glob("*.json"))) if spool.is_dir() else 0

    def stop(self) -> None:
        if self.proc is not None:
            stop_service(self.proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the older checkout")
    parser.add_argument("--after", type=Path, default=Path("."), help="default: this one")
    parser.add_argument("--runs", type=int, default=40, help="timed runs per case and side")
    parser.add_argument("--embedder", default="none", help="WORKBENCH_EMBEDDER of both services")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds to wait after start")
    args = parser.parse_args()

    sides = {"before": Checkout(args.before, args.embedder)}
    sides["after"] = Checkout(args.after, args.embedder)
    try:
        for side in sides.values():
            side.start()
        time.sleep(args.settle)  # e.g. let MiniLM finish loading (--embedder minilm --settle 15)
        times: dict[tuple[str, str], list[float]] = {}
        for case, script, fixture in CASES:
            for _ in range(args.runs):
                for name, side in sides.items():
                    times.setdefault((case, name), []).append(side.run_hook(script, fixture))
    finally:
        for side in sides.values():
            side.stop()

    print(f"python {sys.version.split()[0]}; {os.cpu_count()} cpus; embedder={args.embedder}")
    print(f"before = {sides['before'].root}\nafter  = {sides['after'].root}")
    head = f"{'before p50':>11} {'p95':>7} {'after p50':>11} {'p95':>7}"
    print(f"{'hook, service up (ms)':28} {head}")
    for case, _, _ in CASES:
        cells = []
        for name in sides:
            ordered = sorted(times[(case, name)])
            p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
            cells.append(f"{statistics.median(ordered):11.1f} {p95:7.1f}")
        print(f"{case:28} {' '.join(cells)}")
    print("spooled while up: " + ", ".join(f"{n} {s.spooled()}" for n, s in sides.items()))


if __name__ == "__main__":
    main()
