"""Wall times of the worst cases the suite used to time (issue 23: no timing asserts in tests).

Nine tests asserted a wall-clock limit; on a loaded 2-core box such a limit fails for reasons
that are not the code's. The tests keep every check of *what* happens (the output is bounded,
the event arrives, the hook spools, the service exits by itself); the *how fast* is here, printed
beside the limit the test used to hold it to. A case well past its old limit is worth a look.

Cases (each the test's own input, timed ``--repeat`` times; median and slowest):
- the offline compressor on a 4.8 MB pytest output and a 5 MB read
  (tests/test_compress_offline.py::test_huge_responses_stay_bounded_and_fast, was < 1 s);
- the XML parser on adversarial replies
  (tests/test_compress_xml.py::test_adversarial_replies_parse_in_linear_time, was < 2 s);
- ``strip_private`` on 20,000 tag pairs
  (tests/test_redact.py::test_long_text_with_many_tags_is_fast, was < 2 s);
- a saved memory and a hook observation reaching ``GET /stream``, and a shutdown with a stream
  open (tests/test_stream.py, was < 1 s, < 1 s, < 5 s);
- the Read hook with the service down
  (tests/test_hooks_recall.py::test_read_with_the_service_down_prints_empty_and_never_spools,
  was < 10 s) and a hook against a service that accepts and never answers
  (tests/test_hooks_delivery.py::test_a_stalled_service_times_out_and_spools, was under
  ``TOTAL_TIMEOUT_S`` + 8 s).

The backoff check in tests/test_crash.py stays a test: it asserts a lower bound (at least
0.05 s between retries), which load can only lengthen.

Usage: ``.venv/bin/python bench/worst_cases.py [--repeat 5] [--skip-service]``
Figures, not assertions (STYLE lesson 20).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return seconds


def row(name: str, seconds: list[float], old_limit: str) -> None:
    median = statistics.median(seconds)
    print(f"{name:<46} {median:>9.3f} {max(seconds):>9.3f}   {old_limit}", flush=True)


def offline_compressor() -> None:
    from tests.offline_events import CWD, PYTEST_FAILING, bash, event, one
    from workbench.compress.offline import OfflineCompressor

    huge = bash("pytest", "collecting ...\n" + ("x" * 120 + "\n") * 40_000 + PYTEST_FAILING)
    read = event(
        "Read",
        {"file_path": f"{CWD}/big.log"},
        {"type": "text", "file": {"content": "line\n" * 1_000_000}},
    )
    compressor = OfflineCompressor()
    one(huge, compressor)
    one(read, compressor)


def adversarial_xml() -> None:
    from workbench.compress.xml import parse_observations, parse_summary

    for reply in (
        "<observation>" * 20_000,
        "<observation><title>" * 10_000,
        "<observation><facts>" + "<fact>" * 20_000,
        "<summary><request>" * 10_000,
        "<" * 100_000,
    ):
        parse_observations(reply)
        parse_summary(reply)


def many_private_tags() -> None:
    from workbench.redact import strip_private

    strip_private(("word <private>s</private> <private> " * 20_000) + "</private>")


def in_process(repeat: int) -> None:
    row("offline compressor, 4.8 MB output + 5 MB read", timed(offline_compressor, repeat), "< 1 s")
    row("XML parse, 5 adversarial replies", timed(adversarial_xml, repeat), "< 2 s")
    row("strip_private, 20,000 tag pairs", timed(many_private_tags, repeat), "< 2 s")


def stream_cases(repeat: int, scratch: Path) -> None:
    from tests.conftest import Service, base_env, free_port
    from tests.test_stream import EDIT, SSEClient, save

    saved, observed, shutdown = [], [], []
    for n in range(repeat):
        data_dir = scratch / f"stream-{n}" / "data"
        data_dir.mkdir(parents=True)
        port = free_port()
        service = Service(data_dir, port, base_env(data_dir, port, WORKBENCH_EMBEDDER="none"))
        service.start(timeout=120)
        client = SSEClient(service.url + "/stream")
        try:
            client.next("connected", timeout=60)
            started = time.perf_counter()
            save(service, f"the stream carries memory {n}")
            client.next("new_observation", timeout=60)
            saved.append(time.perf_counter() - started)
            sid = f"bench-stream-{n}"
            init = {"contentSessionId": sid, "project": "bench", "prompt": "fix the expiry check"}
            service.post("/api/sessions/init", init)
            started = time.perf_counter()
            service.post(
                "/api/sessions/observations",
                {
                    "contentSessionId": sid,
                    **{k: EDIT[k] for k in ("tool_name", "tool_input", "tool_response", "cwd")},
                },
            )
            client.next("new_observation", timeout=60)
            observed.append(time.perf_counter() - started)
            started = time.perf_counter()
            service.stop()
            shutdown.append(time.perf_counter() - started)
        finally:
            client.close()
            service.stop()
    row("a save reaching /stream", saved, "< 1 s")
    row("a hook observation reaching /stream", observed, "< 1 s")
    row("shutdown with a stream open", shutdown, "< 5 s")


def hook_cases(repeat: int, scratch: Path) -> None:
    from hooks import _runtime
    from tests.conftest import base_env, free_port
    from tests.hook_harness import load_payload, run_hook

    read = load_payload("pre_tool_use_read")
    down = []
    for n in range(repeat):
        data_dir = scratch / f"down-{n}"
        data_dir.mkdir()
        down.append(run_hook("pre_tool_use_read", read, base_env(data_dir, free_port())).seconds)
    row("Read hook, service down", down, "< 10 s")
    stalled = []
    for n in range(repeat):
        data_dir = scratch / f"stalled-{n}"
        data_dir.mkdir()
        with socket.socket() as listener:  # accepts the connection (backlog), never answers
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            env = base_env(data_dir, listener.getsockname()[1])
            stalled.append(
                run_hook("post_tool_use", load_payload("post_tool_use_read"), env).seconds
            )
    limit = _runtime.TOTAL_TIMEOUT_S
    row("PostToolUse hook, service stalled", stalled, f"{limit} s <= t < {limit + 8} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per case (default 5)")
    parser.add_argument(
        "--skip-service", action="store_true", help="only the in-process cases (no service)"
    )
    args = parser.parse_args()
    print(f"{'case':<46} {'median s':>9} {'slowest s':>9}   the test's old limit")
    in_process(args.repeat)
    if args.skip_service:
        return
    with tempfile.TemporaryDirectory(prefix="bench-worst-") as scratch:
        stream_cases(args.repeat, Path(scratch))
        hook_cases(args.repeat, Path(scratch))


if __name__ == "__main__":
    main()
