"""Find the running service, or start it detached. Standard library only.

Used by ``workbench serve --detach``, the CLI's and MCP server's auto-start and the demo.
The service proves it is *ours* by answering ``/api/health`` with ``"service": "workbench"``;
anything else on the port counts as not running. ``serving`` goes one step further: the
service must also serve *this* data dir (its ``instanceId`` is the data dir's id,
``workbench/instance.py``); a service of another data dir on the port is a ``WrongService``
error naming both, never a service to use.

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

from workbench import instance, spawn
from workbench.errors import WrongService

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


def serving(data_dir: Path, port: int, timeout: float = 0.5) -> dict[str, Any] | None:
    """The health document of the service on ``port`` if it serves ``data_dir``, else None
    when nothing of ours answers; ``WrongService`` when a service of another data dir does."""
    found = health(port, timeout)
    if found is None:
        return None
    check_instance(data_dir, port, found)
    return found


def check_instance(data_dir: Path, port: int, found: dict[str, Any]) -> None:
    """Raise ``WrongService`` unless the health document ``found`` is ``data_dir``'s service."""
    expected = instance.read(data_dir)
    theirs = found.get("instanceId")
    if expected is not None and theirs == expected:
        return
    raise WrongService(wrong_service_message(data_dir, port, found))


def wrong_service_message(data_dir: Path, port: int, found: dict[str, Any] | None) -> str:
    """One sentence: whose service answers on ``port``, whose we wanted, and the fix."""
    other = (found or {}).get("dataDir")
    if not (found or {}).get("instanceId"):
        whose = (
            f"a workbench service that does not say which data dir it serves (an older "
            f"version; its data dir: {other or 'unknown'})"
        )
    else:
        whose = f"the workbench service of another data dir ({other or 'unknown'})"
    return (
        f"{whose} answers on 127.0.0.1:{port}, the port of data dir {data_dir}; nothing was "
        f"read or written through it. Fix: give each data dir its own port (unset `port` in "
        f"their settings.json and WORKBENCH_PORT: each then gets a default port of its own, "
        f"or set different ones), restart that service (`workbench stop -d {other or 'DIR'}`), "
        f"then run the command again"
    )


def ensure_running(
    data_dir: Path, port: int, wait_s: float = 5.0, python: str | None = None
) -> dict[str, Any] | None:
    """Return the health document, starting the service if needed; None if it never came up.

    ``WrongService`` when another data dir's service holds the port: ours could not bind it.
    """
    found = serving(data_dir, port)
    if found is not None:
        return found
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    instance.ensure(data_dir)  # before the spawn: the id the service will report is this one
    deadline = time.monotonic() + wait_s
    with (data_dir / spawn.SPAWN_LOCK).open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            we_spawn = True
        except BlockingIOError:
            we_spawn = False  # someone else is starting it: just wait for it below
        try:
            if we_spawn and serving(data_dir, port) is None:
                proc = spawn.spawn_service(data_dir, port, python)
            else:
                proc = None
            while time.monotonic() < deadline:
                found = serving(data_dir, port, timeout=0.3)
                if found is not None:
                    return found
                if proc is not None and proc.poll() is not None:
                    return serving(data_dir, port)  # exited: maybe another instance won
                time.sleep(0.05)
        finally:
            if we_spawn:
                fcntl.flock(lock, fcntl.LOCK_UN)
    return None
