"""Ingest throughput through the real HTTP API with the offline compressor. Prints figures.

1. single enqueues/s: POST /api/sessions/observations, one event per request, from several
   client processes over keep-alive connections (like many hooks at once);
2. end to end: from the first enqueue until the worker has stored every observation;
3. import: observations/s through POST /api/import at 100,000 rows.

Usage: python bench/ingest.py [--events 5000] [--clients 2] [--import-rows 100000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, start_service, stop_service  # noqa: E402


def request(
    port: int,
    method: str,
    path: str,
    body: object = None,
    conn: http.client.HTTPConnection | None = None,
) -> tuple[int, object]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    data = None if body is None else json.dumps(body)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    payload = json.loads(resp.read() or b"null")
    if own:
        conn.close()
    return resp.status, payload


def tool_event(client: int, index: int) -> dict[str, object]:
    path = f"/home/dev/src/bench/pkg{index % 50}/module_{index}.py"
    return {
        "contentSessionId": f"bench-{client}",
        "tool_name": "Edit" if index % 3 else "Read",
        "tool_input": {
            "file_path": path,
            "old_string": f"x = {index}",
            "new_string": f"x = {index + 1}",
        },
        "tool_response": {
            "filePath": path,
            "oldString": f"x = {index}",
            "newString": f"x = {index + 1}",
        },
        "cwd": "/home/dev/src/bench",
        "tool_use_id": f"toolu_{client}_{index}",
    }


def raw_request(port: int, path: str, body: dict[str, object]) -> bytes:
    """One keep-alive HTTP/1.1 POST, serialised up front (the hooks also speak raw HTTP).

    The Host names the port: the service refuses any other (service/origin.py).
    """
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


def read_response(sock: socket.socket, buffer: bytes) -> tuple[int, bytes]:
    """Read one Content-Length framed response; return (status, leftover bytes)."""
    while b"\r\n\r\n" not in buffer:
        buffer += sock.recv(65536)
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += sock.recv(65536)
    return int(head.split(b" ", 2)[1]), rest[length:]


def client_worker(port: int, client: int, count: int, out: mp.Queue) -> None:  # type: ignore[type-arg]
    """Post ``count`` tool events one at a time over one keep-alive connection.

    Requests are serialised before the clock starts, so the figure measures the service,
    not Python's http.client (which costs more per request than the route itself).
    """
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    init = {"contentSessionId": f"bench-{client}", "project": "bench", "prompt": "benchmark"}
    sock.sendall(raw_request(port, "/api/sessions/init", init))
    _, buffer = read_response(sock, b"")
    posts = [
        raw_request(port, "/api/sessions/observations", tool_event(client, i)) for i in range(count)
    ]
    start = time.perf_counter()
    for post in posts:
        sock.sendall(post)
        status, buffer = read_response(sock, buffer)
        assert status == 200, status
    out.put(time.perf_counter() - start)
    sock.close()


def wait_idle(port: int) -> None:
    while True:
        _, health = request(port, "GET", "/api/health")
        if health["queueDepth"] == 0:  # type: ignore[index]
            return
        time.sleep(0.02)


def import_document(rows: int) -> dict[str, object]:
    return {
        "format": "workbench-export",
        "version": 1,
        "sessions": [
            {"content_session_id": f"imp-{s}", "project": f"proj{s % 5}"}
            for s in range(rows // 100 + 1)
        ],
        "observations": [
            {
                "content_session_id": f"imp-{i // 100}",
                "project": f"proj{(i // 100) % 5}",
                "type": "discovery",
                "title": f"Observation {i} about module {i % 977}",
                "narrative": f"Read module {i % 977} and found function f{i}.",
                "facts": [f"fact {i}"],
                "concepts": ["bench"],
                "files_read": [f"/src/m{i % 977}.py"],
                "created_at_epoch": 1_764_000_000_000 + i * 1000,
            }
            for i in range(rows)
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=5000, help="events per client")
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--import-rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_service(
            Path(tmp) / "data",
            port,
            WORKBENCH_COMPRESSOR="offline",
            WORKBENCH_MAX_BODY_BYTES=str(512 * 1024 * 1024),
        )
        try:
            out: mp.Queue = mp.Queue()  # type: ignore[type-arg]
            workers = [
                mp.Process(target=client_worker, args=(port, c, args.events, out))
                for c in range(args.clients)
            ]
            wall = time.perf_counter()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            enqueue_s = time.perf_counter() - wall
            wait_idle(port)
            e2e_s = time.perf_counter() - wall
            total = args.events * args.clients
            _, stats = request(port, "GET", "/api/stats")
            stored = stats["totals"]["observations"]  # type: ignore[index]

            document = import_document(args.import_rows)
            t0 = time.perf_counter()
            status, report = request(port, "POST", "/api/import", document)
            import_s = time.perf_counter() - t0
            assert status == 200, report
        finally:
            stop_service(proc)
    rows = [
        (
            f"single enqueues (HTTP, {args.clients} clients)",
            f"{total / enqueue_s:,.0f} events/s",
            f"{total} events in {enqueue_s:.2f} s",
        ),
        (
            "end to end (enqueue → stored)",
            f"{stored / e2e_s:,.0f} observations/s",
            f"{stored} observations in {e2e_s:.2f} s",
        ),
        (
            "import (POST /api/import)",
            f"{args.import_rows / import_s:,.0f} observations/s",
            f"{args.import_rows} rows in {import_s:.2f} s (incl. JSON upload)",
        ),
    ]
    try:
        from rich.console import Console
        from rich.table import Table

        grid = Table(title="bench/ingest.py (offline compressor, 2 cores)")
        for col in ("measure", "throughput", "detail"):
            grid.add_column(col)
        for row in rows:
            grid.add_row(*row)
        Console().print(grid)
    except ImportError:
        for row in rows:
            print(" | ".join(row))


if __name__ == "__main__":
    main()
