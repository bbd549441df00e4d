"""The service tunes glibc's malloc before anything allocates (``recall/heap_trim``, issue 21:
service RSS ≤ 300 MiB).

- ``cap_arenas``: glibc gives each thread that allocates its own arena, up to 8 per core, and
  each keeps its freed pages. A real Python process (a subprocess, so the setting does not leak
  into the test run) starts eight threads that allocate numpy arrays, then counts its arenas
  with glibc's own ``malloc_info`` report: past two without the cap, at most two with it.
- ``fix_heap_thresholds``: once a block of up to 32 MiB that glibc had mapped on its own is
  freed, glibc raises its threshold to that size, and later blocks below it come from the heap,
  where one small block still in use above them keeps their pages after they are freed. A
  process frees one 30 MiB array, then allocates twenty 6 MiB arrays each followed by a 64 KiB
  block it keeps, and frees the arrays: ~120 MiB stay resident by default, none once the
  thresholds are fixed (at 4 MiB).

And the service's entry point sets both before anything else runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="malloc arenas are glibc's"
)

COUNT_ARENAS = r"""
import ctypes, ctypes.util, sys, threading
import numpy as np
from workbench.recall import heap_trim
if sys.argv[1] == "capped":
    assert heap_trim.cap_arenas()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
start = threading.Barrier(8)
def work():
    start.wait()
    keep = [np.ones(4096 + n) for n in range(200)]
    del keep
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
buf, size = ctypes.c_char_p(), ctypes.c_size_t()
libc.open_memstream.restype = ctypes.c_void_p
stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
libc.malloc_info(0, ctypes.c_void_p(stream))
libc.fclose(ctypes.c_void_p(stream))
print(buf.value.decode().count("<heap nr="))
"""


def child(script: str, mode: str) -> str:
    """What a fresh Python process running ``script`` with argument ``mode`` prints."""
    done = subprocess.run(
        [sys.executable, "-c", script, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def arenas(mode: str) -> int:
    return int(child(COUNT_ARENAS, mode))


def test_eight_allocating_threads_share_two_arenas_once_capped() -> None:
    assert arenas("free") > 2  # glibc's default: an arena per thread
    assert arenas("capped") <= 2


def test_the_service_caps_its_arenas_before_anything_else_runs() -> None:
    source = (ROOT / "service" / "__main__.py").read_text(encoding="utf-8")
    body = source.split("def main(", 1)[1]
    assert body.index("cap_arenas()") < body.index("load_settings(")


HOLD_PAGES = r"""
import ctypes, sys
from pathlib import Path
import numpy as np
from workbench.recall import heap_trim
if sys.argv[1] == "fixed":
    assert heap_trim.fix_heap_thresholds()
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
big = np.ones(30 * 2**20 // 8)  # mapped by glibc, then freed: raises the default threshold
del big
before = rss()
blocks, kept = [], []
for _ in range(20):
    blocks.append(np.ones(6 * 2**20 // 8))
    kept.append(ctypes.create_string_buffer(64 * 1024))  # still in use above each array
del blocks
print(rss() - before - 20 * 64 / 1024)
"""


def held_mib(mode: str) -> float:
    return float(child(HOLD_PAGES, mode))


def test_freed_mib_arrays_leave_no_pages_behind_once_the_thresholds_are_fixed() -> None:
    assert held_mib("default") > 60  # 20 arrays of 6 MiB, most of them still resident
    assert held_mib("fixed") < 5


def test_the_service_fixes_the_thresholds_before_anything_else_runs() -> None:
    source = (ROOT / "service" / "__main__.py").read_text(encoding="utf-8")
    body = source.split("def main(", 1)[1]
    assert body.index("fix_heap_thresholds()") < body.index("load_settings(")
