"""Embedding cost through a real service: backfill, reindex projection, burst catch-up, RSS.

For each checkout given (``--root``, repeatable: e.g. the branch before and this one), on a
fresh temporary data dir with ``WORKBENCH_EMBEDDER=minilm``:

1. idle backfill: import ``--observations`` demo observations (each text made unique) into a
   running service and time until the vector index holds them all: texts/s, and the time a
   100k reindex would take at that rate (**projected**, not measured at 100k);
2. busy backfill: the same on a second fresh store while hooks post ``--hook-rate`` tool
   events/s (PostToolUse, offline compressor), with those requests' latency;
3. burst: ``--burst-rate`` events/s for ``--burst-s`` seconds (the issue's target is 300/s for
   60 s; a shorter burst is labelled **scaled**), then the seconds until the queue is drained
   and the vector index has caught up (or how far behind it still is after ``--max-wait``);
4. RSS of the service and, when there is one, of its embedding worker.

"Behind" is the observations in the store (counted read-only) minus ``/api/index/status`` →
``indexed``, which both the in-service embedder and the worker process report. Figures, not
assertions; on a shared 2-core machine, compare columns of one run, never runs taken apart.

Usage: python bench/embed_backfill.py --root /path/before --root . [--observations 600]
"""

from __future__ import annotations

import argparse
import json
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from bench.harness import free_port, start_service, stop_service  # noqa: E402
from bench.ingest import raw_request, read_response, request, tool_event  # noqa: E402


def health(port: int) -> dict[str, Any]:
    return request(port, "GET", "/api/health")[1]  # type: ignore[return-value]


def behind(h: dict[str, Any]) -> int | None:
    emb = h.get("embeddings", {})
    return emb.get("pending") if emb.get("state") == "ready" else None


def status_mib(pid: int | None, key: str) -> float | None:
    """``key`` (``VmRSS``: now, ``VmHWM``: peak) of ``pid`` from ``/proc``, in MiB; None when
    there is no such process."""
    if not pid:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
            if line.startswith(f"{key}:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def rss_mib(pid: int | None) -> float | None:
    return status_mib(pid, "VmRSS")


def rss(port: int) -> dict[str, float | None]:
    h = health(port)
    child = (h.get("vectors") or {}).get("pid")
    return {"service_mib": rss_mib(h.get("pid")), "worker_mib": rss_mib(child)}


def document(count: int) -> dict[str, Any]:
    """``count`` demo observations, each text made unique (so each one is embedded)."""
    from workbench.demo import load_memory

    demo = load_memory()
    rows = demo["observations"]
    observations = []
    for i in range(count):
        row = dict(rows[i % len(rows)])
        row.pop("id", None)
        row["title"] = f"{row.get('title') or ''} (#{i})"
        row["created_at_epoch"] = 1_764_000_000_000 + i * 1000
        row.pop("created_at", None)
        observations.append(row)
    return {
        "format": "workbench-export",
        "version": 1,
        "sessions": demo["sessions"],
        "observations": observations,
    }


def stored(data: Path) -> int:
    """Observations in the store right now (read-only: the service stays the one writer)."""
    with sqlite3.connect(f"file:{data / 'workbench.db'}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])


def indexed(port: int) -> int | None:
    status = request(port, "GET", "/api/index/status")[1]
    return status.get("indexed") if status.get("state") == "ready" else None  # type: ignore[union-attr]


def wait_caught_up(
    port: int, data: Path, until: float, slack: int = 0
) -> tuple[float | None, int | None]:
    """Seconds until nothing is queued and the index lacks at most ``slack`` of the stored
    observations; ``(None, how many it lacks)`` when ``until`` comes first."""
    started = time.monotonic()
    lacking: int | None = None
    while time.monotonic() < until:
        queued = health(port)["queueDepth"]
        have = indexed(port)
        lacking = None if have is None else max(0, stored(data) - have)
        if queued == 0 and lacking is not None and lacking <= slack:
            return time.monotonic() - started, lacking
        time.sleep(0.1)
    return None, lacking


class Poster(threading.Thread):
    """Posts tool events at ``rate``/s over one keep-alive socket; records latencies."""

    def __init__(self, port: int, client: int, rate: float, seconds: float) -> None:
        super().__init__(daemon=True)
        self.port, self.client, self.rate, self.seconds = port, client, rate, seconds
        self.latencies: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        init = {"contentSessionId": f"bench-{self.client}", "project": "bench", "prompt": "b"}
        sock.sendall(raw_request(self.port, "/api/sessions/init", init))
        _, buffer = read_response(sock, b"")
        began = time.monotonic()
        i = 0
        while not self.stop.is_set() and time.monotonic() - began < self.seconds:
            due = began + i / self.rate
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            # Unique per client and event: every text is new to the embeddings cache.
            event = tool_event(self.client, self.client * 1_000_000 + i)
            body = raw_request(self.port, "/api/sessions/observations", event)
            t0 = time.perf_counter()
            sock.sendall(body)
            _, buffer = read_response(sock, buffer)
            self.latencies.append((time.perf_counter() - t0) * 1000)
            i += 1
        sock.close()


def post_at(port: int, rate: float, seconds: float, clients: int, base: int) -> list[Poster]:
    posters = [Poster(port, base + c, rate / clients, seconds) for c in range(clients)]
    for p in posters:
        p.start()
    return posters


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def start_and_import(
    root: Path, data: Path, port: int, extra: dict[str, str], observations: int
) -> subprocess.Popen[bytes]:
    """A fresh service on ``data`` whose embedder has loaded, given ``observations`` to embed."""
    data.mkdir()
    proc = start_service(
        data,
        port,
        root=root,
        log=data.parent / f"service-{port}.log",
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_COMPRESSOR="offline",
        **extra,
    )
    try:
        load_until = time.monotonic() + 120
        while behind(health(port)) is None and time.monotonic() < load_until:
            time.sleep(0.1)
        status, body = request(port, "POST", "/api/import", document(observations))
        assert status == 200, body
    except BaseException:
        stop_service(proc, 30)
        raise
    return proc


def measure(root: Path, args: argparse.Namespace, extra: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"root": str(root)}
    with tempfile.TemporaryDirectory() as tmp:
        # 1. idle backfill
        data, port = Path(tmp) / "idle", free_port()
        proc = start_and_import(root, data, port, extra, args.observations)
        try:
            t0 = time.monotonic()
            took, left = wait_caught_up(port, data, t0 + args.max_wait)
            idle_rate = args.observations / took if took else None
            out["idle"] = {
                "texts": args.observations,
                "seconds": round(took, 1) if took else None,
                "behind_at_give_up": None if took else left,
                "texts_per_s": round(idle_rate, 1) if idle_rate else None,
                "projected_100k_reindex_min": round(100_000 / idle_rate / 60, 1)
                if idle_rate
                else None,
            }
            out["rss_after_idle_backfill"] = rss(port)
            h = health(port)
            out["embedder"] = h["embeddings"].get("embedder")
        finally:
            stop_service(proc, 30)
        # 2. busy backfill + 3. burst, on a second store
        data, port = Path(tmp) / "busy", free_port()
        proc = start_and_import(root, data, port, extra, args.observations)
        try:
            t0 = time.monotonic()
            posters = post_at(port, args.hook_rate, args.max_wait, 1, 0)
            slack = max(5, int(args.hook_rate))  # a second of fresh events may be in flight
            took, left = wait_caught_up(port, data, t0 + args.max_wait, slack)
            for p in posters:
                p.stop.set()
                p.join()
            lat = [x for p in posters for x in p.latencies]
            total = args.observations + (len(lat) - (left or 0))
            out["busy"] = {
                "hook_rate": args.hook_rate,
                "seconds": round(took, 1) if took else None,
                "behind_at_give_up": None if took else left,
                "texts_per_s": round(total / took, 1) if took else None,
                "hook_ms_p50": pct(lat, 0.5),
                "hook_ms_p95": pct(lat, 0.95),
            }
            wait_caught_up(port, data, time.monotonic() + min(args.max_wait, 60))
            # 3. burst
            b0 = time.monotonic()
            posters = post_at(port, args.burst_rate, args.burst_s, args.clients, 100)
            for p in posters:
                p.join()
            sent_s = time.monotonic() - b0
            lat = [x for p in posters for x in p.latencies]
            h = health(port)
            have = indexed(port)
            at_end = None if have is None else max(0, stored(data) - have)
            took, left = wait_caught_up(port, data, time.monotonic() + args.max_wait)
            out["burst"] = {
                "target_rate": args.burst_rate,
                "seconds": args.burst_s,
                "scaled": args.burst_s < 60,
                "events": len(lat),
                "achieved_rate": round(len(lat) / sent_s, 1),
                "queue_at_end": h["queueDepth"],
                "behind_at_end": at_end,
                "catch_up_s": round(took, 1) if took else None,
                "behind_at_give_up": None if took else left,
                "hook_ms_p50": pct(lat, 0.5),
                "hook_ms_p95": pct(lat, 0.95),
            }
            out["rss_after_burst"] = rss(port)
        finally:
            stop_service(proc, 30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, action="append", help="checkout(s); default: this")
    parser.add_argument("--observations", type=int, default=600)
    parser.add_argument("--hook-rate", type=float, default=10.0)
    parser.add_argument("--burst-rate", type=float, default=300.0)
    parser.add_argument("--burst-s", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--max-wait", type=float, default=180.0)
    parser.add_argument(
        "--onnx-dir", type=Path, help="WORKBENCH_ONNX_MODEL_DIR for the services (if built)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    extra = {"WORKBENCH_ONNX_MODEL_DIR": str(args.onnx_dir)} if args.onnx_dir else {}
    results = [measure(root.resolve(), args, extra) for root in (args.root or [HERE])]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        idle, busy, burst = r["idle"], r["busy"], r["burst"]
        print(f"\n== {r['root']}  (embedder {r['embedder']})")
        print(
            f"idle backfill: {idle['texts']} texts in {idle['seconds']} s = "
            f"{idle['texts_per_s']} texts/s; 100k reindex PROJECTED "
            f"{idle['projected_100k_reindex_min']} min"
            + (f" (gave up, {idle['behind_at_give_up']} behind)" if not idle["seconds"] else "")
        )
        print(
            f"busy backfill (hooks at {busy['hook_rate']}/s): {busy['texts_per_s']} texts/s "
            f"in {busy['seconds']} s; hook POST p50 {busy['hook_ms_p50']} ms, "
            f"p95 {busy['hook_ms_p95']} ms"
        )
        label = "SCALED " if burst["scaled"] else ""
        print(
            f"{label}burst {burst['target_rate']}/s x {burst['seconds']} s: {burst['events']} "
            f"events at {burst['achieved_rate']}/s; at its end queue {burst['queue_at_end']}, "
            f"behind {burst['behind_at_end']}; caught up {burst['catch_up_s']} s later"
            + (
                f" (gave up, {burst['behind_at_give_up']} behind)"
                if burst["catch_up_s"] is None
                else ""
            )
            + f"; hook POST p50 {burst['hook_ms_p50']} ms, p95 {burst['hook_ms_p95']} ms"
        )
        print(f"RSS after idle backfill: {r['rss_after_idle_backfill']}")
        print(f"RSS after burst: {r['rss_after_burst']}")


if __name__ == "__main__":
    main()
