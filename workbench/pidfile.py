"""The PID file, held with an exclusive ``flock``: one service per data dir.

The lock, not the file's existence, is the truth: a service killed with -9 leaves its file
behind, but the kernel drops its lock, so the next start takes over instead of refusing
forever (the "daemon fails to start" failure of the original design).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from workbench.errors import WorkbenchError


class AlreadyRunning(WorkbenchError):
    code = "ALREADY_RUNNING"
    status_code = 409


class PidFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        """Lock and write our PID, or raise ``AlreadyRunning`` naming the live PID."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            other = handle.read().strip() or "?"
            handle.close()
            raise AlreadyRunning(
                f"another workbench service (pid {other}) already serves this data dir "
                f"({self.path.parent}); stop it with `workbench stop` or use another "
                "WORKBENCH_DATA_DIR"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        if self._handle is None:
            return
        try:
            self._handle.seek(0)
            self._handle.truncate()
            self._handle.flush()
            fcntl.flock(self._handle, fcntl.LOCK_UN)
        finally:
            self._handle.close()
            self._handle = None
            try:
                self.path.unlink()
            except OSError:
                pass


def read_pid(path: Path) -> int | None:
    """The PID in the file if a live process holds the lock, else None."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                text = handle.read().strip()
                return int(text) if text.isascii() and text.isdigit() else None
            fcntl.flock(handle, fcntl.LOCK_UN)
            return None  # nobody holds it: a stale file
    except OSError:
        return None


def terminate(path: Path, timeout: float = 15.0) -> tuple[int | None, bool]:
    """SIGTERM the service holding ``path`` and wait; return ``(pid or None, stopped)``."""
    import signal
    import time

    pid = read_pid(path)
    if pid is None:
        return None, True
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if read_pid(path) != pid:
            return pid, True
        time.sleep(0.05)
    return pid, False
