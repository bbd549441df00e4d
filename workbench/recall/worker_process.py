"""The service's side of the embedding worker: start it, feed it, watch it, restart it, end it.

The child is ``python -m workbench.recall.embed_worker`` (see its docstring for the
protocol). This object lives in the service's indexer thread, which calls ``supervise`` on
every pass: a child that died is restarted after a backoff (1 s, doubling to 30 s; reset once
it has run for a minute), except when it exited because the model cannot load or loads under
another name (restarting would only fail again: the state says why instead). The child says
``alive`` every second; ``health`` calls a live child silent for ``STALL_S`` ``stalled``
(SIGSTOP, a hang), where its last word would still read ``idle``.

Asleep: a child caught up and idle for ``embed_worker_linger_s`` exits with
``EXIT_CAUGHT_UP`` to give back its copy of the model; that is no crash (state ``asleep``, no
restart, no backoff), and ``resume`` starts a new one, after the last id the old one passed or
earlier, when memories fall behind again (the indexer calls it). A service whose memories
all have their vectors starts no child at all (``rest``: ``asleep`` from the start); the
first memory that falls behind starts one the same way.

Why the child cannot leak (claude-mem's vector sidecar does): it is spawned by the indexer
thread, which lives as long as the service; it reads its stdin and exits at EOF, which the
kernel delivers when the service dies however it dies; it asks for ``PR_SET_PDEATHSIG``; and
``stop`` closes the pipe, then terminates, then kills.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from workbench.locate import absolute_model_dirs
from workbench.settings import Settings

log = logging.getLogger("workbench.recall")

BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0
STABLE_S = 60.0  # a child that ran this long resets the backoff
STALL_S = 10.0  # silent this long (it says "alive" every second): stopped or hung
IDS_PER_LINE = 2048  # ids named per ``ids`` line (the rest on the indexer's next prod)
PERMANENT = {3: "loads another model than the service", 4: "cannot load the model"}
EXIT_CAUGHT_UP = 5  # embed_worker.EXIT_CAUGHT_UP (not imported: that module is the child's)


def plan_start(behind: Sequence[int], newest: int) -> tuple[int, list[int]]:
    """Where a new worker starts reading, and the ids before that it must be told of.

    ``behind``: the observation ids without a cached vector, ascending; ``newest``: the
    highest id the indexer has seen. Why: the worker reads in id order from a cursor and
    hashes every row it reads, so a start from id 0 over a store whose vectors are all there
    re-read 100k rows (over 100 s under load) to find nothing. Outcome: the cursor starts
    before the densest tail of ``behind`` (the longest run from the end in which at least
    half the ids are behind: an import, a backlog), and the scattered ids before it (edited
    memories) are named explicitly (``ids`` on stdin). Nothing behind: start after ``newest``.
    """
    ordered = sorted(behind)
    newest = max(newest, ordered[-1] if ordered else 0)
    start = len(ordered)
    for k in range(len(ordered) - 1, -1, -1):
        if 2 * (len(ordered) - k) >= newest - ordered[k] + 1:
            start = k
    if start == len(ordered):
        return newest, ordered
    return ordered[start] - 1, ordered[:start]


class EmbedWorkerProcess:
    """One supervised embedding worker for one store and one model name."""

    def __init__(
        self, settings: Settings, model: str, on_progress: Callable[[], None] | None = None
    ) -> None:
        self.settings = settings
        self.model = model
        self._on_progress = on_progress or (lambda: None)
        self.proc: subprocess.Popen[str] | None = None
        # starting | embedding | idle | asleep | restarting | failed | stopped (+ "stalled")
        self.state = "stopped"
        self.reason = ""
        self.restarts = 0
        self.cursor = 0  # the highest observation id the child has passed
        self.embedded = 0  # texts embedded by children of this service
        self.embed_seconds = 0.0
        self._started_at = 0.0
        self._heard_at = 0.0  # monotonic time of the child's last line (its heartbeat)
        self._backoff = BACKOFF_FIRST_S
        self._restart_at: float | None = None
        self._stopping = False
        self._lock = threading.Lock()  # one writer on the child's stdin
        self._life = threading.Lock()  # a restart and a stop never interleave

    # ----- lifecycle (the indexer thread) --------------------------------------------------
    def start(self, from_id: int | None = None) -> None:
        """Spawn a child; ``from_id``: it starts after that observation (default: the first)."""
        if from_id is not None:
            self.cursor = max(0, from_id)
        # A restart after a crash goes on from the cursor, not from id 0 (which re-hashed
        # every row: over 100 s at 100k on a loaded box).
        env = absolute_model_dirs(dict(os.environ))
        env.update(
            WORKBENCH_DATA_DIR=str(self.settings.data_dir),
            WORKBENCH_EMBEDDER=self.settings.embedder,
            WORKBENCH_EMBED_RUNTIME=self.settings.embed_runtime,
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            PYTHONUNBUFFERED="1",
        )
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "workbench.recall.embed_worker",
                "--data-dir",
                str(self.settings.data_dir),
                "--model",
                self.model,
                "--db",
                str(self.settings.db_path),
                "--embedder",
                self.settings.embedder,
                "--runtime",
                self.settings.embed_runtime,
                "--parent-pid",
                str(os.getpid()),
                "--from-id",
                str(self.cursor),
                "--linger",
                str(self.settings.embed_worker_linger_s),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # the service's log
            env=env,
            text=True,
            bufsize=1,
        )
        self.state, self.reason = "starting", "loading the model"
        self._started_at = self._heard_at = time.monotonic()
        threading.Thread(
            target=self._read,
            args=(self.proc.stdout,),
            name="workbench-embed-worker-reader",
            daemon=True,
        ).start()

    def supervise(self) -> None:
        """Restart a dead child after its backoff (call often; cheap when all is well)."""
        with self._life:
            self._supervise()

    def _supervise(self) -> None:
        proc = self.proc
        if self._stopping or proc is None or proc.poll() is None:
            return
        code = proc.returncode
        now = time.monotonic()
        if code == EXIT_CAUGHT_UP:
            if self.state != "asleep":
                self.state = "asleep"
                self.reason = (
                    "caught up: the worker exited to free its copy of the model; it starts "
                    "again when memories fall behind"
                )
                self._backoff = BACKOFF_FIRST_S
            return
        if code in PERMANENT:
            if self.state != "failed":
                self.state = "failed"
                self.reason = f"embedding worker {PERMANENT[code]}: {self.reason}"
                log.error("%s", self.reason)
            return
        if self._restart_at is None:
            if now - self._started_at >= STABLE_S:
                self._backoff = BACKOFF_FIRST_S
            self._restart_at = now + self._backoff
            self.state = "restarting"
            self.reason = f"embedding worker (pid {proc.pid}) exited with {code}"
            log.warning("%s; restarting in %.0f s", self.reason, self._backoff)
            self._backoff = min(BACKOFF_MAX_S, self._backoff * 2)
            return
        if now >= self._restart_at:
            self._restart_at = None
            self.restarts += 1
            self.start()

    def rest(self) -> None:
        """Nothing behind at the first pass: no child is started (``asleep``, no pid).

        Why: a child loads its own copy of the model (114-130 MiB RSS at 100k) and lingered
        ``embed_worker_linger_s`` with nothing to embed after every service start (issue 21,
        service + worker RSS). ``resume`` starts one when memories fall behind.
        """
        with self._life:
            if self.proc is None and not self._stopping:
                self.state = "asleep"
                self.reason = (
                    "nothing behind: every memory has its vector; the worker starts when "
                    "memories fall behind"
                )

    def resume(self, from_id: int) -> bool:
        """Start a child after ``from_id`` if none was started yet or this one is asleep;
        True when it did."""
        with self._life:
            if self._stopping:
                return False
            if self.proc is not None:
                if self.proc.poll() is None:
                    return False
                if self.proc.returncode != EXIT_CAUGHT_UP:
                    return False  # a crash: _supervise restarts it after its backoff
            self.start(from_id)
            return True

    def stop(self, timeout: float = 5.0) -> None:
        with self._life:
            self._stopping = True
            proc = self.proc
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # EOF: the child exits at once
        except OSError:
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.state = "stopped"

    # ----- commands (any thread) -----------------------------------------------------------
    def wake(self) -> None:
        self._send("wake")

    def rescan(self) -> None:
        self._send("rescan")

    def embed_ids(self, ids: Sequence[int]) -> None:
        """Name ids behind the child's cursor (edited texts): it embeds them next."""
        for first in range(0, len(ids), IDS_PER_LINE):
            part = ids[first : first + IDS_PER_LINE]
            self._send("ids " + " ".join(str(int(i)) for i in part))

    def _send(self, line: str) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.poll() is not None:
            return
        with self._lock:
            try:
                proc.stdin.write(line + "\n")
                proc.stdin.flush()
            except (OSError, ValueError):  # it died meanwhile: supervise() restarts it
                pass

    # ----- what it says --------------------------------------------------------------------
    def _read(self, stream: IO[str] | None) -> None:
        if stream is None:
            return
        for line in stream:
            self._heard_at = time.monotonic()
            try:
                message = json.loads(line)
            except ValueError:
                continue
            event = message.get("event")
            if event == "ready":
                self.state, self.reason = "embedding", str(message.get("reason", ""))
            elif event == "batch":
                self.state = "embedding"
                self.cursor = int(message.get("cursor", self.cursor))
                self.embedded += int(message.get("embedded", 0))
                self.embed_seconds += float(message.get("seconds", 0.0))
                self._on_progress()
            elif event == "idle":
                self.state = "idle"
                self.cursor = int(message.get("cursor", self.cursor))
                self._on_progress()
            elif event == "error":
                self.reason = str(message.get("reason", "unknown error"))

    def health(self) -> dict[str, Any]:
        """``state`` is ``stalled`` for a live child silent past ``STALL_S`` (its heartbeat
        stopped: SIGSTOP, a hang), whatever it last said."""
        proc = self.proc
        alive = proc is not None and proc.poll() is None
        rate = self.embedded / self.embed_seconds if self.embed_seconds else None
        state, reason = self.state, self.reason
        silent = time.monotonic() - self._heard_at
        if alive and proc is not None and silent > STALL_S:
            state = "stalled"
            reason = (
                f"the embedding worker (pid {proc.pid}) has not been heard from for "
                f"{silent:.0f} s: it is stopped (SIGSTOP, a debugger) or hung, and new "
                "memories wait for their vectors. Resume it (kill -CONT) or kill it; a dead "
                "worker is restarted"
            )
        return {
            "pid": proc.pid if alive and proc is not None else None,
            "state": state,
            "reason": reason,
            "restarts": self.restarts,
            "cursor": self.cursor,
            "embedded": self.embedded,
            "textsPerSecond": round(rate, 1) if rate else None,
        }
