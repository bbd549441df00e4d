"""Find the running service, or start it detached. Standard library only.

Used by ``workbench serve --detach``, the CLI's and MCP server's auto-start and the demo.
The service proves it is *ours* by answering ``/api/health`` with ``"service": "workbench"``;
anything else on the port counts as not running.

Spawning is guarded by an exclusive ``flock`` on ``<data_dir>/spawn.lock`` so that several
callers at once start one service (the SessionStart hook takes the same lock in
``hooks/session_start.py``, over its raw-socket client), and the wait for it is bounded.
The service itself takes the PID-file lock, which is what makes a second one exit. How the
service is started (command, cwd, environment) is ``workbench.spawn``'s, shared with the hook.
"""

from __future__ import annotations

import fcntl
import http.client
import json
import time
from pathlib import Path
from typing import Any

from workbench import spawn

HOST = "127.0.0.1"


def health(port: int, timeout: float = 0.5) -> dict[str, Any] | None:
    """The service's health document, or None when nothing of ours answers."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", "/api/health")
        response = conn.getresponse()
        if response.status != 200:
            return None
        body = json.loads(response.read().decode("utf-8"))
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()
    if isinstance(body, dict) and body.get("service") == "workbench":
        return body
    return None


def ensure_running(
    data_dir: Path, port: int, wait_s: float = 5.0, python: str | None = None
) -> dict[str, Any] | None:
    """Return the health document, starting the service if needed; None if it never came up."""
    found = health(port)
    if found is not None:
        return found
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    deadline = time.monotonic() + wait_s
    with (data_dir / "spawn.lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            we_spawn = True
        except BlockingIOError:
            we_spawn = False  # someone else is starting it: just wait for it below
        try:
            if we_spawn and health(port) is None:
                proc = spawn.spawn_service(data_dir, port, python)
            else:
                proc = None
            while time.monotonic() < deadline:
                found = health(port, timeout=0.3)
                if found is not None:
                    return found
                if proc is not None and proc.poll() is not None:
                    return health(port)  # it exited: maybe another instance won the race
                time.sleep(0.05)
        finally:
            if we_spawn:
                fcntl.flock(lock, fcntl.LOCK_UN)
    return None
