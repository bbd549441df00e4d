"""Keep the stdio wire on private descriptors, with fd 0 and fd 1 pointed elsewhere.

Stdlib only (``front`` uses it before anything heavy is imported). While the MCP server
serves, fd 0 reads the null device and fd 1 writes to stderr: a child process (the service
started on demand) cannot read the client's bytes, and a stray ``print`` cannot corrupt the
protocol.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import suppress


def claim(fd: int, diversion: int) -> tuple[int, Callable[[], None]]:
    """Move the wire on ``fd`` to a private descriptor and point ``fd`` at ``diversion``.

    Returns the private descriptor and the function that puts the wire back.
    """
    if sys.platform == "win32":  # pragma: no cover - the stdio wire is never diverted there
        os.close(diversion)
        return fd, lambda: None
    import fcntl

    wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(diversion, fd)
    os.close(diversion)

    def restore() -> None:
        with suppress(OSError):
            os.dup2(wire, fd)

    return wire, restore
