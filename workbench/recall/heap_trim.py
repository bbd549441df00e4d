"""Give the heap's freed pages back to the OS after loading a model or an index.

Why: loading the ONNX MiniLM, the static model (its float32 table read, then kept as float16)
and the FAISS index allocate and free tens of MiB of scratch; glibc keeps those pages in the
process, so the service's RSS stayed ~40 MiB above what it uses (issue 21: measured with
/proc/self/status at 100k with full vectors, bench/search.py's RSS rows). ``malloc_trim(0)``
returns them. A no-op off glibc (macOS, musl): nothing to gain there, nothing to break.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from typing import Any


def trim_heap() -> bool:
    """``malloc_trim(0)`` on glibc; True when it ran."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once: ``find_library`` runs ``ldconfig -p`` in a
    child process, and the indexer trims after every bulk pass. None off glibc."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
