"""Redaction on adversarial tag nesting, before and after, side by side in one run (issue 19).

The input: ``<priv`` × d, ``<private>x</private>``, ``ate>x</private>`` × d. Removing the
innermost block re-forms ``<private>`` around it, d times over, so the old redaction (remove
every block, scan again, until nothing changes: ``git show <--before>:workbench/redact.py``,
imported under another name) takes one full pass per level: quadratic. The new one is a few
linear scans whatever the nesting.

Two parts:
1. ``strip_private`` on that input at 60 KB, 1 MB and 10 MB: this tree in-process; the old
   module in a child process per size, killed at ``--cap`` seconds (then the figure is the cap
   and a quadratic extrapolation from the largest size that finished). Also a tag-dense text
   that is not nested (every block closed), to show the common case did not get slower.
2. The event loop of the real service during one 30 KB ``POST /api/memory/save`` of that text:
   a thread polls ``GET /api/health`` every 10 ms while the save is in flight; the slowest
   health answer is how long the loop was blocked. Main's service runs from ``git archive``
   (the worktrees are not touched), this tree's beside it, same machine, same run.

Usage: ``.venv/bin/python bench/redact.py [--before main] [--cap 60] [--skip-service]
[--skip-redaction]``
Figures, not assertions (STYLE lesson 20).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from multiprocessing.queues import SimpleQueue
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, module_at, progress, start_service, stop_service, tree_at  # noqa: E402
from workbench import redact  # noqa: E402

SIZES = {"60 KB": 60_000, "1 MB": 1_000_000, "10 MB": 10_000_000}
SAVE_BYTES = 30_000


def nested(size: int) -> str:
    """The adversarial input, about ``size`` characters (20 per nesting level)."""
    depth = max(1, (size - 20) // 20)
    return "<priv" * depth + "<private>x</private>" + "ate>x</private>" * depth


def dense(size: int) -> str:
    """Tag-dense but ordinary: closed blocks between words, no re-forming."""
    unit = "word <private>secret</private> more <system-reminder>r</system-reminder> "
    return unit * max(1, size // len(unit))


def before_module(ref: str) -> ModuleType:
    """``ref``'s ``workbench/redact.py`` (stdlib-only), imported as ``redact_before``."""
    return module_at(ref, "workbench/redact.py", "redact_before")


def _timed_child(ref: str, kind: str, size: int, out: SimpleQueue[float]) -> None:
    text = (nested if kind == "nested" else dense)(size)
    module = before_module(ref)
    started = time.perf_counter()
    module.strip_private(text)
    out.put(time.perf_counter() - started)


def time_before(ref: str, kind: str, size: int, cap: float) -> float | None:
    """Seconds the old redaction took, or None when it was still running at ``cap``."""
    out: SimpleQueue[float] = multiprocessing.SimpleQueue()
    child = multiprocessing.Process(target=_timed_child, args=(ref, kind, size, out))
    child.start()
    child.join(cap + 5)  # the child builds its input and imports first
    if child.is_alive():
        child.kill()
        child.join()
        return None
    return float(out.get()) if not out.empty() else None


def time_after(kind: str, size: int) -> float:
    text = (nested if kind == "nested" else dense)(size)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        redact.strip_private(text)
        best = min(best, time.perf_counter() - started)
    return best


def redaction_figures(ref: str, cap: float) -> None:
    print(f"strip_private, best of 3 after; before = {ref}'s, capped at {cap:.0f} s")
    print(f"{'input':<22} {'before':>22} {'after':>10}")
    for kind in ("nested", "dense"):
        finished: tuple[int, float] | None = None
        capped = False  # a smaller size already ran past the cap: a larger one would too
        for label, size in SIZES.items():
            progress(f"{kind} {label}")
            after = time_after(kind, size)
            before = None if capped else time_before(ref, kind, size, cap)
            capped = before is None
            if before is not None:
                finished = (size, before)
                shown = f"{before:.3f} s"
            elif finished is not None:
                estimate = finished[1] * (size / finished[0]) ** 2
                shown = f">{cap:.0f} s (~{estimate:,.0f} s quad.)"
            else:
                shown = f">{cap:.0f} s"
            print(f"{kind + ' ' + label:<22} {shown:>22} {after:>8.3f} s", flush=True)


# ----- the service's event loop ------------------------------------------------------------------


def _request(port: int, method: str, path: str, body: bytes | None = None) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    started = time.perf_counter()
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        conn.getresponse().read()
    finally:
        conn.close()
    return time.perf_counter() - started


def loop_freeze(port: int, text: str) -> tuple[float, float]:
    """(slowest health answer during the save of ``text``, the save's own time), in s."""
    body = json.dumps({"text": text, "title": "t"}).encode()
    _request(port, "GET", "/api/health")  # warm
    slowest = 0.0
    done = threading.Event()

    def poll() -> None:
        nonlocal slowest
        while not done.is_set():
            slowest = max(slowest, _request(port, "GET", "/api/health"))
            time.sleep(0.01)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    time.sleep(0.1)
    save = _request(port, "POST", "/api/memory/save", body)
    time.sleep(0.1)
    done.set()
    poller.join()
    return slowest, save


def service_figures(ref: str) -> None:
    """Each service: a plain 30 KB save (the floor: the store's own write), then the nested."""
    print(f"\nevent loop during one {SAVE_BYTES // 1000} KB memory/save")
    print(f"{'service':<14} {'text':<8} {'slowest /api/health':>20} {'the save':>10}")
    texts = {
        "plain": "note " + "words " * (SAVE_BYTES // 6),
        "nested": "note " + nested(SAVE_BYTES),
    }
    for label, root in ((f"before ({ref})", tree_at(ref)), ("after", ROOT)):
        progress(f"service {label}")
        data_dir = Path(tempfile.mkdtemp(prefix="wb-redact-svc-")) / "data"
        port = free_port()
        proc = start_service(data_dir, port, root=root, WORKBENCH_EMBEDDER="none")
        try:
            for name, text in texts.items():
                slowest, save = loop_freeze(port, text)
                print(f"{label:<14} {name:<8} {slowest:>18.3f} s {save:>8.3f} s", flush=True)
        finally:
            stop_service(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="main", help="the git ref to compare with")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per old run")
    parser.add_argument("--skip-service", action="store_true")
    parser.add_argument("--skip-redaction", action="store_true")
    args = parser.parse_args()
    if not args.skip_redaction:
        redaction_figures(args.before, args.cap)
    if not args.skip_service:
        service_figures(args.before)


if __name__ == "__main__":
    main()
