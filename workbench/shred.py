"""Overwrite a file with zeros, make that reach the disk, then remove it.

Why not only ``unlink``: the file's blocks keep its bytes until the file system reuses them,
and a forgotten memory's words must leave the disk (``workbench.forget``). Overwriting in
place first is what a copy-on-write or journaling file system may still keep elsewhere, so
it is the best a program can do without the device's own erase; the forget report says so
for what it cannot reach.
"""

from __future__ import annotations

import os
from pathlib import Path


def shred(path: Path) -> None:
    """Zero ``path``'s bytes, fsync, unlink. Raises ``OSError`` (the caller reports it)."""
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.write(b"\0" * size)
        handle.flush()
        os.fsync(handle.fileno())
    path.unlink()
