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

``fix_heap_thresholds``: glibc maps a block of ``M_MMAP_THRESHOLD`` or more on its own and
unmaps it when freed, but when it frees such a block of up to 32 MiB it raises the threshold
to that block's size ("dynamic" threshold). From then on blocks below it come from the heap,
and a heap page is given back only once everything above it is free: one small block still in
use keeps every freed array below it resident. Loading the index and the models frees blocks
of several MiB, so the service's arrays of MiBs (index scratch, slot arrays, bitmaps) went on
the heap for good. Fixed thresholds turn the adjustment off: blocks of ``MMAP_THRESHOLD``
(4 MiB) or more are always mapped and given back, and the top of a heap is given back once
``TRIM_THRESHOLD`` (32 MiB) of it is free. Why those two (issue 21; ``bench/search.py`` at
100k with full vectors after its 1,200-1,500 requests, ``bench/heldout_locomo.py`` hybrid p50
at 5.9k memories with a project per conversation, interleaved in one run each):
- none: 295-299 MiB right after the requests (304-305 before the query embedder shared the
  static tier's tokenizer);
- 128 KiB (glibc's starting value), trim left at 128 KiB: 277-281 MiB, but hybrid p50
  +0.6 to +1.2 ms. Two costs, both page faults: every request's thread gave its heap's top
  back (``strace`` at 100k: one ``madvise`` of ~30 MB per hybrid request) and the next request
  faulted in what it touched there again; and, likely the larger part at 5.9k, a project's
  ~600 vectors read for exact scoring (0.9 MB, ``VectorIndex._score_slots``) were mapped and
  faulted in anew on every search;
- 1 MiB / 4 MiB, trim left at 128 KiB: 279 / 280 MiB, hybrid p50 still +0.3 to +0.7 ms;
- 4 MiB and a 32 MiB trim (the default's own trim at a 16 MiB threshold): 287 MiB, hybrid
  p50 15.8 against 16.1 ms without (no cost).
Once the service had been idle for ``service/idle_trim.py``'s few seconds every choice held
276-281 MiB (but none, once: 294): the thresholds mostly decide what it holds while it works.
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
    return _mallopt(_M_ARENA_MAX, count)


MMAP_THRESHOLD = 4 * 1024 * 1024
TRIM_THRESHOLD = 32 * 1024 * 1024
_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3


def fix_heap_thresholds(mmap_at: int = MMAP_THRESHOLD, trim_at: int = TRIM_THRESHOLD) -> bool:
    """Blocks of ``mmap_at`` bytes or more are mapped on their own and unmapped when freed, and
    a heap's top is given back once ``trim_at`` bytes of it are free, for good (glibc's dynamic
    raise turned off); True when both were set. Called first thing by the service, with
    ``cap_arenas``."""
    return _mallopt(_M_MMAP_THRESHOLD, mmap_at) and _mallopt(_M_TRIM_THRESHOLD, trim_at)


def _mallopt(param: int, value: int) -> bool:
    """glibc's ``mallopt(param, value)``; True when it was set (False off glibc)."""
    mallopt = _function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(param, value))


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
