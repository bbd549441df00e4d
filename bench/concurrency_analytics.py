"""Writes, every analytics report, reindex and forget at once against one real service.

The report (issue 19, item 1): hook writes every 0.2 s while a loop called
``GET /api/stats/economics`` killed the service with SIGBUS within 12–41 s, and
``PRAGMA integrity_check`` then found a row missing from the ``event_key`` index. This drives
that load, harder, for ``--seconds``:

- writers: ``POST /api/sessions/observations`` (what the PostToolUse hook sends);
- readers: every ``GET /api/stats/<report>`` in turn;
- ``POST /api/reindex`` and ``POST /api/observations/forget`` of the oldest observation,
  every ``--every`` seconds each.

A service that dies is counted and restarted (as a user's hook would restart it), so the run
goes on; at the end the service is stopped and the file checked with ``integrity_check``.
Printed: requests, errors (by route kind and status), writes deferred by a 503 STORE_BUSY and
replayed (the hook spools those; a reindex holds the write lock while it rebuilds full text),
deaths, the integrity result.
``run_load`` is shared with ``tests/test_hardening_analytics_concurrency.py``, which asserts
on the same counts. Figures, never assertions here.

    python bench/concurrency_analytics.py --seconds 60
"""

from __future__ import annotations

import argparse
import http.client
import json
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import free_port, progress, start_service, stop_service  # noqa: E402
from workbench.knowledge.reports import REPORTS  # noqa: E402

SESSION = "concurrency-session"
REPLAYS = 20  # tries for one write answered 503 STORE_BUSY before it counts as an error


@dataclass
class Counts:
    """What one run did: requests and failures per kind, deaths, the final integrity check."""

    requests: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    # Hook writes answered 503 STORE_BUSY (the write lock was held past the hook's wait) and
    # then replayed until stored, as the hook's spool does: backpressure, not a loss.
    deferred: int = 0
    deaths: int = 0
    death_codes: list[int | None] = field(default_factory=list)
    integrity: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, status: int | None) -> None:
        with self.lock:
            self.requests[kind] += 1
            if status is None or status >= 400:
                self.errors[f"{kind} {status}"] += 1

    def defer(self) -> None:
        with self.lock:
            self.deferred += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": sum(self.requests.values()),
            "by_kind": dict(self.requests),
            "errors": dict(self.errors),
            "deferred": self.deferred,
            "deaths": self.deaths,
            "death_codes": self.death_codes,
            "integrity_check": self.integrity,
        }


def call(port: int, method: str, path: str, body: Any = None) -> tuple[int | None, Any]:
    """One request; (status, JSON) or (None, the error) when the service did not answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode("utf-8")
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as exc:
        return None, str(exc)
    finally:
        conn.close()


def observation(n: int) -> dict[str, Any]:
    """A PostToolUse event for a Read of a distinct file (each one derives an observation)."""
    path = f"/work/proj/module_{n}.py"
    return {
        "contentSessionId": SESSION,
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_response": {
            "type": "text",
            "file": {"filePath": path, "content": f"def f{n}():\n    return {n}\n"},
        },
        "cwd": "/work/proj",
        "tool_use_id": f"toolu_conc_{n}",
    }


def run_load(
    port: Callable[[], int],
    seconds: float,
    *,
    alive: Callable[[], bool],
    restart: Callable[[], int | None],
    writers: int = 2,
    readers: int = 2,
    every: float = 2.0,
) -> Counts:
    """Drive the load for ``seconds``; a dead service is counted and ``restart``ed
    (``restart`` returns the dead process's exit code: ``-7`` is SIGBUS)."""
    counts = Counts()
    stop = threading.Event()
    serial = iter(range(10**9))
    serial_lock = threading.Lock()
    restarting = threading.Lock()

    def next_n() -> int:
        with serial_lock:
            return next(serial)

    def answered(kind: str, status: int | None) -> None:
        counts.record(kind, status)
        if status is None and not alive():
            with restarting:
                if not alive():  # one thread restarts; the others wait for it
                    counts.deaths += 1
                    progress(f"the service died ({kind}); restarting")
                    counts.death_codes.append(restart())

    def write(n: int) -> int | None:
        """One hook write; a 503 STORE_BUSY is replayed (the hook spools it and the service
        replays the spool) until it is stored or REPLAYS run out, then counted as it ended."""
        for _ in range(REPLAYS):
            status, body = call(port(), "POST", "/api/sessions/observations", observation(n))
            if status != 503 or not isinstance(body, dict) or body.get("error") != "STORE_BUSY":
                return status
            counts.defer()
            time.sleep(0.2)
        return status

    def write_loop() -> None:
        while not stop.is_set():
            answered("write", write(next_n()))
            stop.wait(0.02)

    def read_loop(offset: int) -> None:
        i = offset
        while not stop.is_set():
            report = REPORTS[i % len(REPORTS)]
            i += 1
            status, _ = call(port(), "GET", f"/api/stats/{report}")
            answered(f"stats/{report}", status)

    def maintain_loop() -> None:
        while not stop.wait(every):
            status, _ = call(port(), "POST", "/api/reindex")
            answered("reindex", status)
            status, page = call(port(), "GET", "/api/observations?limit=1")
            answered("list", status)
            items = page.get("items") if isinstance(page, dict) else None
            if items:
                status, _ = call(
                    port(), "POST", "/api/observations/forget", {"ids": [items[0]["id"]]}
                )
                answered("forget", status)

    call(
        port(),
        "POST",
        "/api/sessions/init",
        {"contentSessionId": SESSION, "project": "proj", "prompt": "read every module"},
    )
    threads = [threading.Thread(target=write_loop) for _ in range(writers)]
    threads += [threading.Thread(target=read_loop, args=(k * 3,)) for k in range(readers)]
    threads.append(threading.Thread(target=maintain_loop))
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join()
    return counts


def integrity(db: Path) -> list[str]:
    """``PRAGMA integrity_check`` of the store, through a fresh connection."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--every", type=float, default=2.0, help="reindex/forget interval")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="wb-conc-")) / "data"
    log = data_dir.parent / "service.log"
    port = free_port()
    env = {"WORKBENCH_EMBEDDER": "none"}
    state = {"proc": start_service(data_dir, port, log=log, **env)}

    def restart() -> int | None:
        code = state["proc"].wait()
        state["proc"] = start_service(data_dir, port, log=log, **env)
        return code

    progress(f"load for {args.seconds:.0f} s on {data_dir}")
    counts = run_load(
        lambda: port,
        args.seconds,
        alive=lambda: state["proc"].poll() is None,
        restart=restart,
        every=args.every,
    )
    alive_at_end = state["proc"].poll() is None
    if not alive_at_end:
        counts.deaths += 1
        counts.death_codes.append(state["proc"].returncode)
    stop_service(state["proc"])
    counts.integrity = integrity(data_dir / "workbench.db")
    figures = counts.to_json()
    figures["alive_at_end"] = alive_at_end
    figures["seconds"] = args.seconds
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
