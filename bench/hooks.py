"""Hook latency, measured the way Claude Code runs hooks: a fresh process per event.

Each run is the absolute venv interpreter plus the script path, with the payload on stdin
(what ``workbench install`` writes into Claude Code's settings). Figures, not assertions: the
start-up budget lives here, not in a test (STYLE lesson 20).

Cases:
- the bare interpreter, for reference (what no hook can beat);
- PostToolUse, UserPromptSubmit and SessionStart against a running service (started here on
  a temporary data dir and a free port, stopped at the end);
- PostToolUse and UserPromptSubmit with the service down (the spool path);
- SessionStart with the service down, which spawns the service and waits for its health
  (a few runs only; each spawned service is stopped again).

Usage: ``.venv/bin/python bench/hooks.py [--runs 30] [--cold 3] [--shell]``
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "hooks"
FIXTURES = ROOT / "tests" / "fixtures" / "hooks"
PYTHON = sys.executable  # run this script with the venv's interpreter, by absolute path
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    free_port,
    hook_env,
    start_service,
    stop_detached,
    stop_service,
)


@dataclass
class Row:
    case: str
    service: str
    times_ms: list[float]
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def p95(self) -> float:
        ordered = sorted(self.times_ms)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def argv_for(script: str, shell: bool, flags: tuple[str, ...]) -> list[str]:
    command = [PYTHON, *flags, str(HOOKS / f"{script}.py")]
    return ["/bin/sh", "-c", " ".join(command)] if shell else command


def time_runs(
    argv: list[str], payload: bytes, env: dict[str, str] | None, runs: int, warmup: int = 2
) -> list[float]:
    times: list[float] = []
    for i in range(warmup + runs):
        started = time.perf_counter()
        proc = subprocess.run(argv, input=payload, env=env, capture_output=True, timeout=60)
        elapsed = (time.perf_counter() - started) * 1000
        if proc.returncode != 0 or len(proc.stdout.splitlines()) > 1:
            raise RuntimeError(f"{argv} broke the hook contract: {proc!r}")
        if i >= warmup:
            times.append(elapsed)
    return times


def payload(name: str) -> bytes:
    return (FIXTURES / f"{name}.json").read_bytes()


# (label, script, fixture, interpreter flags). ``-S`` is how ``workbench install`` writes the
# hook commands; the no-``-S`` row shows what site-packages start-up would add.
HOT: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("PostToolUse (Edit)", "post_tool_use", "post_tool_use_edit", ("-S",)),
    ("PostToolUse (Edit), without -S", "post_tool_use", "post_tool_use_edit", ()),
    ("UserPromptSubmit", "user_prompt_submit", "user_prompt_submit", ("-S",)),
]
SESSION_START = ("SessionStart (startup)", "session_start", "session_start_startup", ("-S",))


def spool_count(data_dir: Path) -> int:
    return len(list((data_dir / "spool").glob("*.json")))


def measure(runs: int, cold: int, shell: bool, tmp: Path) -> list[Row]:
    rows = [
        Row("bare interpreter -S", "-", time_runs([PYTHON, "-S", "-c", "pass"], b"", None, runs)),
        Row(
            "bare interpreter, without -S", "-", time_runs([PYTHON, "-c", "pass"], b"", None, runs)
        ),
    ]

    up_dir, up_port = tmp / "up", free_port()
    proc = start_service(up_dir, up_port, log=tmp / "service-up.log")
    try:
        env = hook_env(up_dir, up_port)
        for label, script, fixture, flags in [*HOT, SESSION_START]:
            times = time_runs(argv_for(script, shell, flags), payload(fixture), env, runs)
            rows.append(Row(label, "up", times))
        rows[-1].note = f"{spool_count(up_dir)} spooled while up"
    finally:
        stop_service(proc)

    for n, (label, script, fixture, flags) in enumerate(HOT):
        down_dir, down_port = tmp / f"down-{n}", free_port()
        env = hook_env(down_dir, down_port)
        times = time_runs(argv_for(script, shell, flags), payload(fixture), env, runs)
        rows.append(Row(label, "down", times, f"{spool_count(down_dir)} spool files"))

    if cold:
        times = []
        for i in range(cold):
            cold_dir, cold_port = tmp / f"cold-{i}", free_port()
            try:
                times += time_runs(
                    argv_for("session_start", shell, ("-S",)),
                    payload("session_start_startup"),
                    hook_env(cold_dir, cold_port),
                    1,
                    warmup=0,
                )
            finally:
                stop_detached(cold_dir, cold_port)
        rows.append(Row("SessionStart, spawns service", "down", times, "spawn + health wait"))
    return rows


def report(rows: list[Row], shell: bool) -> None:
    title = "hook wall time per invocation" + (" (via /bin/sh -c)" if shell else "")
    headers = ["case", "service", "runs", "median ms", "p95 ms", "min ms", "note"]
    cells = [
        [
            r.case,
            r.service,
            str(len(r.times_ms)),
            f"{r.median:.1f}",
            f"{r.p95:.1f}",
            f"{min(r.times_ms):.1f}",
            r.note,
        ]
        for r in rows
    ]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(title)
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
        for line in [headers, *cells]:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
        return
    table = Table(title=title)
    for i, header in enumerate(headers):
        table.add_column(header, justify="right" if 2 <= i <= 5 else "left")
    for line in cells:
        table.add_row(*line)
    Console(width=max(120, Console().width)).print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed runs per case (default 30)")
    parser.add_argument("--cold", type=int, default=3, help="SessionStart spawn runs (0: skip)")
    parser.add_argument("--shell", action="store_true", help="start hooks via /bin/sh -c")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]} at {PYTHON}; {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as tmp:
        rows = measure(args.runs, args.cold, args.shell, Path(tmp))
    report(rows, args.shell)


if __name__ == "__main__":
    main()
