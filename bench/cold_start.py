"""Seconds from a service stop to the first memory injected at SessionStart, before vs after.

Issue 20 item 1: the SessionStart hook used to spawn a stopped service and wait at most 5 s for
it; a loaded 2-core machine needs longer, so the first session after a stop got no memory.
Now the hook reads the block from the store itself when the service does not answer at once.

Each run starts from one stopped state: a copy of a data dir whose store holds a few memories
of a project (written by this tree's real service, which was then stopped). The clock starts
there. SessionStart hooks then run back to back, as sessions would, each a real
``hooks/session_start.py`` subprocess of the side's code, until one injects the memory; the
figure is the time from the start to the end of that hook, and "first" says whether the
first session got it. The service the hook spawned is then stopped (after it came up, so
none is left half-started). "before" runs ``--before-ref``'s whole tree (``git archive``,
``bench.harness.tree_at``: its hooks and the service they spawn), "after" this tree,
alternating, so load hits both alike; "busy" adds ``--burners`` CPU-bound processes for the
whole scenario (by default two: 2 and 8 per core).

``--hook context_file`` measures Cursor's rules file instead (``hooks/context_file.py
--platform cursor`` at the end of a turn; the memory counts once it is in
``.cursor/rules/workbench-context.mdc``): that hook used to wait 5 s for the service too.

Figures, never assertions. Usage::

    .venv/bin/python bench/cold_start.py [--runs 3] [--burners 4 16] [--before-ref main]
        [--hook session_start|context_file]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    burners,
    free_port,
    health,
    hook_env,
    progress,
    start_service,
    stop_detached,
    stop_service,
    tree_at,
    wait_health,
)
from workbench import locate  # noqa: E402

MARK = "cold-start-bench memory"
GIVE_UP_S = 120.0  # a side that never injects within this is reported as such


def make_template(folder: Path, project: Path) -> Path:
    """A data dir whose store holds memories of ``project``, its service stopped."""
    data = folder / "template"
    port = free_port()
    proc = start_service(data, port, WORKBENCH_EMBEDDER="none")
    try:
        name, key = locate.project_identity(str(project))
        for n in range(5):
            body = {"text": f"{MARK} {n}: details", "title": f"{MARK} {n}", "project": name}
            body["projectKey"] = key
            _post(port, "/api/memory/save", body)
    finally:
        stop_service(proc)
    return data


def _post(port: int, path: str, body: dict[str, str]) -> None:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        reply = conn.getresponse()
        reply.read()
        if reply.status != 200:
            raise RuntimeError(f"{path} answered {reply.status}")
    finally:
        conn.close()


RULES = Path(".cursor") / "rules" / "workbench-context.mdc"  # Cursor's, hooks/adapters/cursor.py


def hook_call(hook: str, code_root: Path, project: Path) -> tuple[list[str], bytes]:
    """The argv and stdin of one ``hook`` run in ``project`` (a SessionStart, or the end of
    a Cursor turn for ``context_file``)."""
    script = str(code_root / "hooks" / f"{hook}.py")
    if hook == "context_file":
        event = {"conversation_id": "bench", "hook_event_name": "stop", "status": "completed"}
        event |= {"workspace_roots": [str(project)], "loop_count": 0}
        return [sys.executable, script, "--platform", "cursor"], json.dumps(event).encode()
    event = {"session_id": "bench", "cwd": str(project), "hook_event_name": "SessionStart"}
    event |= {"source": "startup", "transcript_path": ""}
    return [sys.executable, script], json.dumps(event).encode()


def memory_reached(hook: str, stdout: bytes, project: Path) -> bool:
    """True when the run delivered the memory: on stdout, or in Cursor's rules file."""
    if hook == "context_file":
        rules = project / RULES
        return rules.exists() and MARK in rules.read_text("utf-8")
    return MARK.encode() in stdout


def one_run(
    code_root: Path, template: Path, project: Path, work: Path, hook: str = "session_start"
) -> tuple[float, bool]:
    """(seconds from the stopped state to the first memory injected, first session had it)."""
    data = work / "data"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(template, data)
    shutil.rmtree(project / ".cursor", ignore_errors=True)
    port = free_port()
    env = hook_env(data, port, WORKBENCH_EMBEDDER="none")
    argv, payload = hook_call(hook, code_root, project)
    started = time.perf_counter()
    first = True
    try:
        while True:
            out = subprocess.run(argv, input=payload, env=env, capture_output=True).stdout
            seconds = time.perf_counter() - started
            if memory_reached(hook, out, project):
                return seconds, first
            first = False
            if seconds > GIVE_UP_S:
                return float("inf"), False
    finally:
        try:
            wait_health(port, 90.0)
        except RuntimeError:
            pass
        stop_detached(data, port)
        while health(port) is not None:
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    cores = os.cpu_count() or 2
    parser.add_argument(
        "--burners",
        type=int,
        nargs="+",
        default=[2 * cores, 8 * cores],
        help="CPU burners of each busy scenario (default: 2 and 8 per core)",
    )
    parser.add_argument("--before-ref", default="main", help="the commit to compare with")
    parser.add_argument(
        "--hook",
        choices=["session_start", "context_file"],
        default="session_start",
        help="the hook that delivers the memory (context_file: Cursor's rules file)",
    )
    args = parser.parse_args()
    before = tree_at(args.before_ref)
    sides = {"before": before, "after": ROOT}
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project = folder / "acme-api"
        project.mkdir()
        template = make_template(folder, project)
        scenarios = [("quiet", 0)] + [(f"busy{n}", n) for n in args.burners]
        for scenario, count in scenarios:
            figures: dict[str, list[tuple[float, bool]]] = {name: [] for name in sides}
            with burners(count):
                for run in range(args.runs):
                    for name, root in sides.items():
                        progress(f"{scenario} run {run + 1}/{args.runs}: {name}")
                        run_figures = one_run(root, template, project, folder, args.hook)
                        figures[name].append(run_figures)
            for name, runs in figures.items():
                seconds = [s for s, _ in runs]
                got = sum(1 for _, first in runs if first)
                rows.append(
                    f"{scenario:8}{name:8}{statistics.median(seconds):12.2f}"
                    f"{max(seconds):12.2f}{f'{got}/{len(runs)}':>16}"
                )
    shutil.rmtree(before.parent, ignore_errors=True)
    print(
        f"seconds from a service stop to the first memory delivered by {args.hook},"
        f" {args.runs} runs each"
        f" (before = {args.before_ref}, after = this tree; busyN = N CPU burners on"
        f" {os.cpu_count()} cores)"
    )
    print(f"{'':16}{'median':>12}{'worst':>12}{'first session':>16}")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
