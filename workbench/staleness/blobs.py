"""Git blob ids of files, stdlib only, cached by stat signature.

A blob id is ``sha1(b"blob <size>\\0" + content)``: the id git gives the same content, so a
recorded id can be compared with ``git ls-tree``/``git diff`` output as well as with a file.
Hashing reads the file; the cache keyed by ``(path, device, inode, size, mtime_ns)`` means a
file is read again only when it changed. Files over ``MAX_HASH_BYTES`` are not read: their
signature stands in (``size:<n>:mtime:<ns>``), so a huge file costs one ``stat``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import OrderedDict
from dataclasses import dataclass

MAX_HASH_BYTES = 4 * 1024 * 1024  # a capture hashes at most 64 files: 256 MiB at worst
CACHE_SIZE = 20_000
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class FileState:
    """What a path holds now: ``blob`` None when it is absent (or not a regular file)."""

    blob: str | None
    size: int = 0
    mtime_ns: int = 0


ABSENT = FileState(None)
_cache: OrderedDict[tuple[str, int, int, int, int], str] = OrderedDict()


def _signature(size: int, mtime_ns: int) -> str:
    return f"size:{size}:mtime:{mtime_ns}"


def blob_of_bytes(data: bytes) -> str:
    """The git blob id of ``data``."""
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _hash_file(path: str, size: int) -> str | None:
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % size)
    read = 0
    try:
        with open(path, "rb") as handle:  # noqa: PTH123 - a plain read of bytes
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
                read += len(chunk)
    except OSError:
        return None
    # Trigger: the file grew or shrank while it was read. / Why: the header said another
    # size, so the id would match no content. / Outcome: no id (the caller sees "unknown").
    return digest.hexdigest() if read == size else None


def state(path: str) -> FileState:
    """The file's current state; ``ABSENT`` when it is missing, unreadable or not a file."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ABSENT
    if not stat.S_ISREG(st.st_mode):
        return ABSENT
    if st.st_size > MAX_HASH_BYTES:
        return FileState(_signature(st.st_size, st.st_mtime_ns), st.st_size, st.st_mtime_ns)
    key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    blob = _cache.get(key)
    if blob is None:
        blob = _hash_file(path, st.st_size)
        if blob is None:
            return ABSENT
        _cache[key] = blob
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    return FileState(blob, st.st_size, st.st_mtime_ns)


def compare_stat(path: str, size: int, mtime_ns: int) -> str:
    """``"same"`` (size and mtime as recorded: unchanged, no read), ``"resized"`` (another
    size: changed, no read either, since a blob id covers the size), ``"touched"`` (same size,
    other mtime: hash to know), or ``"gone"`` (missing, unreadable, not a regular file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return "gone"
    if not stat.S_ISREG(st.st_mode):
        return "gone"
    if st.st_size != size:
        return "resized"
    return "same" if st.st_mtime_ns == mtime_ns else "touched"
