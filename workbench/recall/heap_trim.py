"""Give the heap's freed pages back to the OS after loading a model or an index.

Why: loading the ONNX MiniLM, the static model (its float32 table read, then kept as float16)
and the FAISS index allocate and free tens of MiB of scratch; glibc keeps those pages in the
process, so the service's RSS stayed ~40 MiB above what it uses (issue 21: measured with
/proc/self/status at 100k with full vectors, bench/search.py's RSS rows). ``malloc_trim(0)``
returns them. A no-op off glibc (macOS, musl): nothing to gain there, nothing to break.

``cap_arenas``: glibc gives each thread that allocates at once its own arena (up to 8 per
core), and each keeps its freed pages; the service's threads (uvicorn's, the vector pool's
four, the indexer's) held 2-5 MiB more at 100k than with two arenas (issue 21: service +
worker ≤ 300 MiB; measured 285-288 → 283 MiB after 100 searches, ``MALLOC_ARENA_MAX=2`` alike;
``mallopt`` sets it from inside the process, before its threads start). The embedding worker
(two lanes) measured the same with and without (116.5 / 116.9 MiB), so it is not capped.

``fix_mmap_threshold``: glibc maps a block of ``M_MMAP_THRESHOLD`` (128 KiB) or more on its
own and unmaps it when freed, but when it frees such a block of up to 32 MiB it raises the
threshold to that block's size ("dynamic" threshold). From then on blocks below it come from
the heap, and a heap page is given back only once everything above it is free: one small block
still in use keeps every freed array below it resident. Loading the index and the models frees
blocks of several MiB, so the service's per-request arrays (query batches, candidate rows,
bitmaps, replies) went on the heap for good. A fixed threshold turns the adjustment off.
Measured at 100k with full vectors, after 1,500 requests of five routes
(``bench/search.py``'s mix): 292-294 MiB right after them without it, 278-280 with it, and
280 either way once the idle trim ran (``service/idle_trim.py``).
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


ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def cap_arenas(count: int = ARENAS) -> bool:
    """At most ``count`` malloc arenas for this process (glibc); True when it was set.
    Called first thing by the service, before any thread allocates."""
    mallopt = _function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, count))


MMAP_THRESHOLD = 128 * 1024  # glibc's default starting value, kept fixed
_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def fix_mmap_threshold(size: int = MMAP_THRESHOLD) -> bool:
    """Blocks of ``size`` bytes or more are mapped on their own and unmapped when freed, for
    good (glibc's dynamic raise turned off); True when it was set. Called first thing by the
    service, with ``cap_arenas``."""
    mallopt = _function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, size))


@functools.cache
def _libc() -> Any:
    """glibc, loaded once (None off Linux or when it cannot be found)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def _function(name: str) -> Any:
    """glibc's function ``name`` (None off glibc, or when this libc lacks it)."""
    libc = _libc()
    return None if libc is None else getattr(libc, name, None)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once: ``find_library`` runs ``ldconfig -p`` in a
    child process, and the indexer trims after every bulk pass. None off glibc."""
    trim = _function("malloc_trim")
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
