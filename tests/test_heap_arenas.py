"""The service caps glibc's malloc arenas (``recall/heap_trim.cap_arenas``, issue 21: RSS).

glibc gives each thread that allocates its own arena, up to 8 per core, and each keeps its
freed pages. A real Python process (a subprocess, so the cap does not leak into the test
run) starts eight threads that allocate numpy arrays, then counts its arenas with glibc's own
``malloc_info`` report: past two without the cap, at most two with it. And the service's
entry point sets it before anything else runs.
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


def arenas(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", COUNT_ARENAS, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(done.stdout.strip())


def test_eight_allocating_threads_share_two_arenas_once_capped() -> None:
    assert arenas("free") > 2  # glibc's default: an arena per thread
    assert arenas("capped") <= 2


def test_the_service_caps_its_arenas_before_anything_else_runs() -> None:
    source = (ROOT / "service" / "__main__.py").read_text(encoding="utf-8")
    body = source.split("def main(", 1)[1]
    assert body.index("cap_arenas()") < body.index("load_settings(")
