"""The service raises its limit on open files, so a burst of connections cannot lock hooks out.

Each connection is a file handle. Under the common soft limit of 1,024 (most Linux sessions;
macOS starts at 256), any local process opening ~1,100 connections that send nothing made the
service refuse every other connection, hooks' and ``/api/health`` alike, until the head
timeout (10 s) closed them, and a process can open them again as fast. The hard limit is
usually far higher (524,288 under systemd): the service now raises its soft limit toward it.

Real parts: ``python -m service`` started with a soft limit of 1,024 and a hard one of 8,192
(as a login session gives them), real sockets.
"""

from __future__ import annotations

import resource
import socket
import sys
from pathlib import Path

import pytest

from bench.harness import free_port, start_service, stop_service
from tests.conftest import http_json

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/<pid>/limits")

SOFT, HARD = 1024, 8192


def limits_of(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text(encoding="utf-8").splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-files line")


def test_a_burst_of_silent_connections_does_not_lock_others_out(data_dir: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip(f"this process may open only {hard} files; the burst needs 1,200")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    port = free_port()
    proc = start_service(data_dir, port, file_limit=(SOFT, HARD), WORKBENCH_EMBEDDER="none")
    held: list[socket.socket] = []
    try:
        assert limits_of(proc.pid) == (HARD, HARD)  # raised to the hard limit
        for _ in range(1100):  # each sends nothing: the head timeout has not closed any yet
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        status, body = http_json("GET", f"http://127.0.0.1:{port}/api/health", timeout=5.0)
        assert status == 200, body
    finally:
        for sock in held:
            sock.close()
        stop_service(proc)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
