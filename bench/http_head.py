"""What a request head that never ends, or never comes, costs the service. Prints figures.

A client (any local process) opens ``--connections`` connections to a real service and on
each sends a request line and one header whose value never ends, 1 MiB at a time, until
``--mib`` MiB have gone out or the service stops reading (it answered and closed). Printed
per checkout (``--root``, repeatable, each on a fresh data dir, no embedding model): the
MiB sent before it stopped reading (the kernel's socket buffers hold a few of them), its
first reply's status line, and its RSS before, after, and at peak (VmHWM).
Then, per checkout, the service started as a login session starts it (open-files limit 1,024
soft, 8,192 hard): its soft limit once up, and whether ``/api/health`` still answers while
``--burst`` connections that send nothing are held open.
Usage: python bench/http_head.py --root A [--root B] [--mib 300] [--connections 1]
       [--stalled 200] [--hold 30] [--burst 1100]
"""

from __future__ import annotations

import argparse
import selectors
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import free_port, start_service, stop_service  # noqa: E402
from bench.search_targets import rss_mb  # noqa: E402

CHUNK = 1 << 20


def flood(port: int, mib: int, connections: int) -> tuple[float, str]:
    """MiB sent before the service stopped reading (all connections), and a reply's status."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(connections)]
    open_ = list(socks)
    sent = 0
    try:
        for sock in socks:
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Pad: " % port)
        while open_ and sent < mib * CHUNK:
            for sock in list(open_):
                try:
                    sock.sendall(b"a" * CHUNK)
                    sent += CHUNK
                except OSError:
                    open_.remove(sock)
        status = "(no reply: still reading)"
        for sock in socks:
            if sock in open_:
                continue
            try:
                reply = sock.recv(200)
            except OSError:
                continue
            if reply:
                status = reply.split(b"\r\n", 1)[0].decode("latin-1")
                break
        return sent / CHUNK, status
    finally:
        for sock in socks:
            sock.close()


def stall(port: int, count: int, hold: float) -> tuple[float, float, str, float]:
    """Open ``count`` partial heads and one silent connection; the median and longest seconds
    the partial ones were held, the first reply's status, and the silent one's seconds."""
    start = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
    selector = selectors.DefaultSelector()
    opened = time.monotonic()
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(start)
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, "partial")
        socks.append(sock)
    silent = socket.create_connection(("127.0.0.1", port), timeout=5)
    silent.setblocking(False)
    selector.register(silent, selectors.EVENT_READ, "silent")
    socks.append(silent)
    held: list[float] = []
    silent_held = hold
    status = "(none: held to the end)"
    try:
        while len(held) < count or silent_held == hold:
            left = hold - (time.monotonic() - opened)
            if left <= 0:
                break
            for key, _ in selector.select(left):
                conn = cast(socket.socket, key.fileobj)
                data = conn.recv(200)
                selector.unregister(conn)
                if key.data == "silent":
                    silent_held = time.monotonic() - opened
                    continue
                held.append(time.monotonic() - opened)
                if data and status.startswith("("):
                    status = data.split(b"\r\n", 1)[0].decode("latin-1")
    finally:
        for sock in socks:
            sock.close()
    held += [hold] * (count - len(held))
    held.sort()
    return held[len(held) // 2], held[-1], status, silent_held


def burst(port: int, count: int) -> str:
    """Hold ``count`` silent connections open and ask for health meanwhile: its status line."""
    socks = []
    try:
        for _ in range(count):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
            reply = sock.recv(200)
        return reply.split(b"\r\n", 1)[0].decode("latin-1") or "(closed)"
    except OSError as exc:
        return f"(refused: {exc.strerror or exc})"
    finally:
        for sock in socks:
            sock.close()


def soft_files(pid: int) -> str:
    for line in Path(f"/proc/{pid}/limits").read_text(encoding="utf-8").splitlines():
        if line.startswith("Max open files"):
            return line.split()[3]
    return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", action="append", type=Path, required=True)
    parser.add_argument("--mib", type=int, default=300)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--stalled", type=int, default=200)
    parser.add_argument("--hold", type=float, default=30.0)
    parser.add_argument("--burst", type=int, default=1100)
    args = parser.parse_args()
    rows = []
    stalls = []
    bursts = []
    with tempfile.TemporaryDirectory(prefix="wb-head-") as folder:
        for n, root in enumerate(args.root):
            port = free_port()
            proc = start_service(
                Path(folder) / f"data-{n}", port, root=root, WORKBENCH_EMBEDDER="none"
            )
            try:
                before = rss_mb(proc.pid)
                read, status = flood(port, args.mib, args.connections)
                after = rss_mb(proc.pid)
                peak = rss_mb(proc.pid, "VmHWM")
                stalls.append((str(root), *stall(port, args.stalled, args.hold)))
            finally:
                stop_service(proc)
            rows.append((str(root), read, status, before, after, peak))
            port = free_port()
            proc = start_service(
                Path(folder) / f"burst-{n}",
                port,
                root=root,
                file_limit=(1024, 8192),
                WORKBENCH_EMBEDDER="none",
            )
            try:
                bursts.append((str(root), soft_files(proc.pid), burst(port, args.burst)))
            finally:
                stop_service(proc)
    print(f"{args.connections} connection(s), up to {args.mib} MiB of one endless header in all")
    print(f"{'checkout':<28} {'MiB sent':>9} {'RSS before':>11} {'after':>7} {'peak':>7}  reply")
    for root, read, status, before, after, peak in rows:
        print(f"{root:<28} {read:>9.0f} {before:>11.0f} {after:>7.0f} {peak:>7.0f}  {status}")
    print()
    print(f"{args.stalled} stalled heads and one silent connection, watched for {args.hold:g} s")
    print(f"{'checkout':<28} {'held p50 s':>10} {'max s':>6} {'silent s':>9}  reply")
    for root, p50, longest, status, silent in stalls:
        print(f"{root:<28} {p50:>10.1f} {longest:>6.1f} {silent:>9.1f}  {status}")
    print()
    print(f"{args.burst} silent connections held, the service started with 1,024 / 8,192 files")
    print(f"{'checkout':<28} {'soft limit':>10}  health meanwhile")
    for root, soft, status in bursts:
        print(f"{root:<28} {soft:>10}  {status}")


if __name__ == "__main__":
    main()
