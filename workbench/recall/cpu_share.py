"""How many cores the embedding worker may use: measured, not assumed (stdlib only).

Why: on 2 cores, two ONNX threads embedded 149 texts/s on a quiet box against 87 for one, but
16.7 against 32.2 with four CPU-bound processes beside them (bench/embed_tuning.py): a second
intra-op thread that had no core to run on waited for the first at every operator. The
threads are now lanes (``embed.OnnxEmbedder``: whole batches side by side, no spinning pool),
so a second lane no longer costs CPU per text (7.2 against 14.1 ms at 2 threads with two
burners, stop 33), but on a full box it still gains nothing and takes its CPU from the
programs the user runs. So the worker counts the cores the *other* processes leave idle,
from ``/proc/stat`` (the machine's busy time) minus its own (``/proc/self/stat``), and runs
one thread per spare core. It measures when it starts and again while it runs
(``CpuShare.spare``: the window since the last call, every ``embed_worker.ADAPT_S``), so a
box that gets busy, or quiet, changes its count within seconds.

Not Linux (no ``/proc``): ``spare`` is None and the worker keeps its default.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

MIN_WINDOW_S = 0.2  # a shorter window is mostly noise (the kernel counts in 10 ms ticks)


def threads_for(spare: float, cores: int) -> int:
    """Threads for ``spare`` idle cores out of ``cores``: whole spare cores only, at least 1.

    A thread gets a core when at least 0.75 of one is free (``floor(spare + 0.25)``): at 1.5
    spare on 2 cores a second thread would share a core half the time and slow both.
    """
    return max(1, min(cores, int(spare + 0.25)))


def _machine_ticks() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot, or None without ``/proc/stat``."""
    try:
        first = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = [int(x) for x in first.split()[1:]]
    if len(fields) < 5:
        return None
    # user nice system idle iowait irq softirq steal (guest time is inside user already)
    idle = fields[3] + fields[4]
    total = sum(fields[:8])
    return total - idle, total


def _own_ticks() -> int | None:
    """This process's user + system clock ticks (all its threads), or None."""
    try:
        stat = Path("/proc/self/stat").read_text(encoding="ascii")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


class CpuShare:
    """Spare cores over the window since the last reading (or since construction)."""

    def __init__(self) -> None:
        self.cores = os.cpu_count() or 1
        self._at = time.monotonic()
        self._machine = _machine_ticks()
        self._own = _own_ticks()

    def spare(self) -> float | None:
        """Cores the other processes left idle since the last call; None when unknown or
        when the window is too short to say."""
        if time.monotonic() - self._at < MIN_WINDOW_S:
            return None
        machine, own = _machine_ticks(), _own_ticks()
        before, before_own = self._machine, self._own
        self._at, self._machine, self._own = time.monotonic(), machine, own
        if machine is None or own is None or before is None or before_own is None:
            return None
        total = machine[1] - before[1]
        if total <= 0:
            return None
        others = max(0, (machine[0] - before[0]) - (own - before_own))
        return max(0.0, self.cores * (1.0 - others / total))


def spare_now(window_s: float = 0.5) -> float | None:
    """Spare cores measured over ``window_s`` from now (the worker's first choice)."""
    share = CpuShare()
    time.sleep(max(MIN_WINDOW_S, window_s))
    return share.spare()
