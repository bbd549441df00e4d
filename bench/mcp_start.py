"""How soon ``workbench mcp`` answers ``initialize`` and ``tools/list``, before vs after.

An agent starts the MCP server at every session and probes it with ``initialize``; Claude
Code gives up on the probe after a short wait (issue 20, item 2). Each run starts a fresh
``python -m workbench mcp --no-start`` (what ``workbench install`` registers), sends
``initialize``, then ``notifications/initialized``, ``tools/list`` and one tool call
(``workflow``, which needs no service), and times each reply from the moment the process was
spawned (the first tool call is where the SDK now loads). "before" is the same command run
on another commit's code (``git archive`` of ``--before-ref`` unpacked into a temporary
folder and put first on ``PYTHONPATH``), in the same run, alternating with "after" so load
hits both alike.

A second table opens the server as Claude Code 2.1.332 does: its ``server/discover`` probe
first (``tests/test_mcp_claude_code.DISCOVER``; it falls back to ``initialize`` on an
error), and, after one tool call, SIGINT: Claude Code sends SIGTERM when the process is still
there 100 ms later.

Figures, never assertions. Usage::

    .venv/bin/python bench/mcp_start.py [--runs 7] [--before-ref main]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import free_port, hook_env, tree_at  # noqa: E402
from tests.test_mcp_claude_code import DISCOVER  # noqa: E402
from workbench.mcp_server.handshake import INITIALIZE  # noqa: E402


def spawn_server(code_root: Path, data_dir: Path) -> subprocess.Popen[bytes]:
    """``workbench mcp --no-start`` of the tree at ``code_root``, on pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "mcp", "--no-start"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=hook_env(data_dir, free_port(), PYTHONPATH=str(code_root)),
        cwd=code_root,
    )


def one_start(code_root: Path, data_dir: Path) -> tuple[float, float, float]:
    """Seconds from spawn to the ``initialize``, ``tools/list`` and first tool call replies."""
    started = time.perf_counter()
    proc = spawn_server(code_root, data_dir)
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
        initialized = time.perf_counter() - started
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}\n')
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
        listed = time.perf_counter() - started
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "workflow"}}
        proc.stdin.write(json.dumps(call).encode() + b"\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
        called = time.perf_counter() - started
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return initialized, listed, called


def claude_start(code_root: Path, data_dir: Path) -> tuple[float, float]:
    """Seconds from spawn to the probe's answer, and from SIGINT (SDK loaded) to the exit."""
    started = time.perf_counter()
    proc = spawn_server(code_root, data_dir)
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(DISCOVER + b"\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
        probed = time.perf_counter() - started
        proc.stdin.write(json.dumps({**INITIALIZE, "id": 0}).encode() + b"\n")
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "workflow"}}
        proc.stdin.write(json.dumps(call).encode() + b"\n")
        proc.stdin.flush()
        while json.loads(proc.stdout.readline()).get("id") != 3:
            pass
        stopping = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        stopped = time.perf_counter() - stopping
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return probed, stopped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before-ref", default="main", help="the commit to compare with")
    args = parser.parse_args()
    before = tree_at(args.before_ref)
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"before": before, "after": ROOT}
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
        claude: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        for _ in range(args.runs):
            for name, root in sides.items():
                figures[name].append(one_start(root, data_dir))
                claude[name].append(claude_start(root, data_dir))
    shutil.rmtree(before.parent, ignore_errors=True)
    print(f"median of {args.runs} fresh starts (before = {args.before_ref}, after = this tree)")
    columns = ["initialize (s)", "tools/list (s)", "first call (s)"]
    print(f"{'':8}" + "".join(f"{c:>16}" for c in columns))
    for name, runs in figures.items():
        medians = [statistics.median(r[i] for r in runs) for i in range(len(columns))]
        print(f"{name:8}" + "".join(f"{m:16.3f}" for m in medians))
    print("as Claude Code 2.1.332 opens and closes it (median)")
    columns = ["probe answered (s)", "SIGINT to exit (s)"]
    print(f"{'':8}" + "".join(f"{c:>20}" for c in columns))
    for name, runs in claude.items():
        medians = [statistics.median(r[i] for r in runs) for i in range(len(columns))]
        print(f"{name:8}" + "".join(f"{m:20.3f}" for m in medians))


if __name__ == "__main__":
    main()
