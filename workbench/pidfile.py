"""The PID file, held with an exclusive ``flock``: one service per data dir.

The lock, not the file's existence, is the truth: a service killed with -9 leaves its file
behind, but the kernel drops its lock, so the next start takes over instead of refusing
forever (the "daemon fails to start" failure of the original design).

The file holds the PID alone (scripts read it with ``int(text)``); the port the holder
listens on goes beside it, in ``service.port``, so a refused second start can say where the
running one is. Both are only believed while the lock is held.
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


def port_path(path: Path) -> Path:
    """Where the lock holder's port is written, beside the PID file."""
    return path.with_suffix(".port")


def already_running_message(data_dir: Path, pid: int | str, port: int | None) -> str:
    """The one sentence every refused start prints: who runs, where, and how to stop it."""
    where = f", port {port}" if port is not None else ""
    return (
        f"another workbench service (pid {pid}{where}) already serves this data dir "
        f"({data_dir}); two services on one data dir would both write its database. Use that "
        f"one, or stop it first with `workbench stop` (or `kill {pid}`), or point "
        "WORKBENCH_DATA_DIR at another folder"
    )


class PidFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def acquire(self, port: int | None = None) -> None:
        """Lock and write our PID (and ``port``), or raise ``AlreadyRunning`` naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            handle = self.path.open("a+", encoding="utf-8")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                other = handle.read().strip() or "?"
                handle.close()
                raise AlreadyRunning(
                    already_running_message(self.path.parent, other, read_port(self.path))
                ) from None
            if _same_file(handle, self.path):
                break
            # A stopping holder unlinked the file between our open and our lock: the lock we
            # hold is on a file nobody else will ever open. Take the one at the path instead.
            handle.close()
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        sidecar = port_path(self.path)
        if port is not None:
            sidecar.write_text(f"{port}\n", encoding="utf-8")
        else:
            sidecar.unlink(missing_ok=True)  # a dead holder's port must not be believed

    def release(self) -> None:
        """Remove the files while still holding the lock, then let go of it.

        In this order a starting service either fails on our lock or creates a fresh file;
        it can never lock the file we are about to delete.
        """
        if self._handle is None:
            return
        try:
            for path in (port_path(self.path), self.path):
                try:
                    path.unlink()
                except OSError:
                    pass
            fcntl.flock(self._handle, fcntl.LOCK_UN)
        finally:
            self._handle.close()
            self._handle = None


def _same_file(handle: IO[str], path: Path) -> bool:
    try:
        at_path = os.stat(path)
    except OSError:
        return False
    held = os.fstat(handle.fileno())
    return (held.st_dev, held.st_ino) == (at_path.st_dev, at_path.st_ino)


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


def read_port(path: Path) -> int | None:
    """The port of the live lock holder of ``path``, if it recorded one."""
    if read_pid(path) is None:
        return None
    try:
        text = port_path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


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


def spawned_pid(data_dir: Path) -> int | None:
    """The service a SessionStart hook spawned less than ``spawn.SPAWN_GRACE_S`` ago, if it
    lives and is ours to signal.

    The hook spawns and returns at once, and records ``"<pid> <epoch>"`` in ``spawn.lock``;
    until that child holds the PID file, only this names it.
    """
    from workbench import spawn

    try:
        pid = spawn.recent_spawn((data_dir / spawn.SPAWN_LOCK).read_text("ascii"))
    except (OSError, UnicodeDecodeError):
        return None
    if pid is None:
        return None
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return None
    return pid


def terminate_starting(
    data_dir: Path, path: Path, timeout: float = 30.0
) -> tuple[int | None, bool]:
    """``terminate`` for a service a hook has only just spawned: wait for it to hold ``path``
    (so the pid is surely that service), then stop it; ``(None, True)`` when there is none.

    Why: ``workbench stop`` right after an agent's session started found no PID file yet,
    said "not running", and the service came up a moment later and stayed.
    """
    import time

    pid = spawned_pid(data_dir)
    if pid is None:
        return None, True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if read_pid(path) == pid:
            return terminate(path)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None, True  # it failed to start (its log says why): nothing to stop
        time.sleep(0.05)
    return pid, False
