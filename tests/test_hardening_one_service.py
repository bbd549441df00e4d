"""One service per data dir, with real processes: whichever way the second one is started.

Two ``python -m service`` started at the same moment (on two ports), ``workbench serve`` and
``workbench serve --detach`` on another port while one runs, and a PID file left behind by a
service killed with -9. The refused start must say which process serves the data dir, on
which port, and how to stop it, in one line (no traceback).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, base_env, free_port, http_json, run_workbench
from workbench.pidfile import terminate

pytestmark = pytest.mark.slow


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_workbench(env, *args)


def _health(port: int) -> dict[str, Any] | None:
    try:
        status, body = http_json("GET", f"http://127.0.0.1:{port}/api/health", timeout=1.0)
    except OSError:
        return None
    return body if status == 200 and isinstance(body, dict) else None


def _assert_names_the_running_service(output: str, pid: int, port: int) -> None:
    assert "already serves this data dir" in output, output
    assert f"pid {pid}" in output, output
    assert f"port {port}" in output, output
    assert "workbench stop" in output, output
    assert "Traceback" not in output, output


def test_two_services_started_at_once_one_serves_the_other_says_who(data_dir: Path) -> None:
    ports = [free_port(), free_port()]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "service"],
            env=base_env(data_dir, port),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for port in ports
    ]
    try:
        deadline = time.monotonic() + 60
        winners: list[int] = []
        while time.monotonic() < deadline and not winners:
            winners = [i for i, port in enumerate(ports) if _health(port) is not None]
            time.sleep(0.05)
        assert len(winners) == 1, "exactly one of the two must serve the data dir"
        winner = winners[0]
        loser = procs[1 - winner]
        output, _ = loser.communicate(timeout=60)
        assert loser.returncode == 1, output
        health = _health(ports[winner])
        assert health is not None
        _assert_names_the_running_service(output, health["pid"], ports[winner])
        assert (data_dir / "service.pid").read_text("utf-8").strip() == str(health["pid"])
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.communicate(timeout=20)


def test_workbench_serve_on_another_port_names_the_running_service(
    make_service: Any, data_dir: Path
) -> None:
    first = make_service()
    pid = first.get("/api/health")[1]["pid"]
    env = base_env(data_dir, free_port())
    for args in (("serve", "--detach"), ("serve",)):
        refused = _cli(env, *args)
        assert refused.returncode == 1, (args, refused.stdout, refused.stderr)
        _assert_names_the_running_service(refused.stdout + refused.stderr, pid, first.port)
    status, health = first.get("/api/health")  # the first one is unharmed
    assert status == 200
    assert health["pid"] == pid
    assert (data_dir / "service.pid").read_text("utf-8").strip() == str(pid)
    assert (data_dir / "service.port").read_text("utf-8").strip() == str(first.port)


def test_a_pid_file_left_by_a_killed_service_does_not_block_workbench_serve(
    make_service: Any, data_dir: Path
) -> None:
    first = make_service()
    first.kill9()  # its PID file stays behind; the kernel dropped its lock
    assert (data_dir / "service.pid").exists()
    port = free_port()
    env = base_env(data_dir, port)
    try:
        started = _cli(env, "serve", "--detach")
        assert started.returncode == 0, started.stderr
        health = _health(port)
        assert health is not None
        assert (data_dir / "service.pid").read_text("utf-8").strip() == str(health["pid"])
        assert (data_dir / "service.port").read_text("utf-8").strip() == str(port)
        stopped = _cli(env, "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert f"pid {health['pid']}" in stopped.stdout
        assert not (data_dir / "service.pid").exists()
        assert not (data_dir / "service.port").exists()
    finally:
        terminate(data_dir / "service.pid")
