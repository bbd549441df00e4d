"""Hook latency per agent platform: every fixture of every platform, through the real scripts.

Each platform's real-shaped payloads (``tests/fixtures/hooks/<platform>/``; Claude Code's are
the top-level ones) are fed to the hook script its event maps to, run the way the agent runs
it (``python -S hooks/<script> --platform <name>``), against one live service. Runs are
interleaved across platforms so machine noise lands on all of them alike. Issue 11 budgets
≤ 50 ms median per hook, whatever the platform.

    .venv/bin/python bench/hooks_platforms.py --runs 20

Figures, not assertions (STYLE lesson 20). PYTHONDONTWRITEBYTECODE is dropped from the hooks'
environment, as an installed hook would run with its bytecode cached.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, hook_env, start_service, stop_service  # noqa: E402
from hooks.adapters import PLATFORMS  # noqa: E402
from workbench.agents.claude_settings import HOOK_SCRIPTS  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "hooks"
SCRIPTS = {event: script for event, (script, _, _) in HOOK_SCRIPTS.items()}
SCRIPTS["SubagentStop"] = SCRIPTS["Stop"]


def cases(platform: str) -> list[tuple[str, str, bytes]]:
    """(fixture name, script, stdin) for each fixture of ``platform`` whose event has a script."""
    folder = FIXTURES if platform == "claude" else FIXTURES / platform
    __import__(f"hooks.adapters.{platform}")
    adapter = sys.modules[f"hooks.adapters.{platform}"]
    out = []
    for path in sorted(folder.glob("*.json")):
        payload = json.loads(path.read_text("utf-8"))
        event = adapter.normalise(payload).get("hook_event_name")
        if event in SCRIPTS:
            out.append((path.stem, SCRIPTS[event], path.read_bytes()))
    return out


def run_once(script: str, stdin: bytes, platform: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-S", str(ROOT / "hooks" / script), "--platform", platform],
        input=stdin,
        env=env,
        capture_output=True,
        check=False,
    )
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per fixture")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="wb-hooks-platforms-"))
    port = free_port()
    proc = start_service(data_dir, port, WORKBENCH_COMPRESSOR="offline", WORKBENCH_EMBEDDER="none")
    env = hook_env(data_dir, port)
    plan = [(p, *case) for p in PLATFORMS for case in cases(p)]
    times: dict[tuple[str, str], list[float]] = {(p, name): [] for p, name, _, _ in plan}
    try:
        for p, _, script, stdin in plan:  # warm-up: bytecode caches, the service's first calls
            run_once(script, stdin, p, env)
        for _ in range(args.runs):
            for p, name, script, stdin in plan:
                times[(p, name)].append(run_once(script, stdin, p, env))
    finally:
        stop_service(proc)
    print(f"hook latency, ms ({args.runs} runs per fixture, one live service, interleaved)")
    print(f"{'platform':<10} {'fixture':<34} {'p50':>7} {'p95':>7}")
    for p in PLATFORMS:
        every: list[float] = []
        for (platform, name), values in times.items():
            if platform != p:
                continue
            every += values
            p95 = statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]
            print(f"{p:<10} {name:<34} {statistics.median(values):7.1f} {p95:7.1f}")
        if every:
            p95 = statistics.quantiles(every, n=20)[-1]
            print(f"{p:<10} {'(all events)':<34} {statistics.median(every):7.1f} {p95:7.1f}")


if __name__ == "__main__":
    main()
