"""The embedding worker: a child process of the service that fills the ``embeddings`` cache.

Why a process: embedding documents is the one CPU-heavy job of recall. In the service it
shared the GIL and the event loop with the hooks' requests (16 texts/s while busy, ingest
slowed several-fold). Here it runs on its own interpreter, niced, and the service's indexer
thread only *adds vectors from the cache* to the FAISS index.

Fed from the store, resumable by construction: it reads observations in id order from a
cursor, hashes each one's ``embed_text``, skips hashes the cache already holds for its model,
embeds the rest in batches and writes each batch in one short transaction (``atomic``, with
the store's busy timeout; the service's writers wait at most one batch). The cache *is* the
progress: after a crash or a restart nothing already written is embedded again.

Protocol with the parent (``workbench.recall.worker_process`` owns the other end):
- argv: ``--data-dir D --model NAME`` (the name the service's query embedder has: a worker
  whose model loads under another name exits with code 3 instead of writing vectors nobody
  would read), ``--from-id N`` (start after this id: a worker started again on demand skips
  what its predecessor passed), ``--linger S``, and the service's settings it needs:
  ``--db``, ``--embedder``, ``--runtime``. It never loads the settings itself: pydantic
  alone was ~20 MiB of its RSS (issue 21); the model paths come from the environment.
- Caught up and idle for ``--linger`` seconds, it exits with code 5 (``EXIT_CAUGHT_UP``): it
  holds a copy of the model (~150 MiB) that nothing needs until memories fall behind again,
  and the service then starts a new one (issue 21: service + worker RSS). Nothing is lost:
  the cache is the progress, and the service re-checks every memory still behind.
- stdin: a line ``wake`` = new observations, look now; ``ids N M …`` = these observations,
  behind the cursor, lack a vector (texts edited in place): embed them next, cursor unmoved;
  ``rescan`` = start again from id 0; EOF = the parent is gone: exit at once. There is no
  periodic rescan from id 0 any more: it re-hashed every row (over 100 s at 100k under
  load), and edits are now announced (the indexer reads ``observation_edits``, m014).
- Threads: ``--threads`` when given, else one per spare core measured at start
  (``cpu_share``), measured again every ``ADAPT_S`` while embedding. They are the ONNX
  embedder's *lanes* (batches embedded side by side, one runtime thread each), so a change
  takes effect at the next batch and costs nothing.
- stdout: one JSON object per line: ``ready`` (model), ``batch`` (cursor, embedded, seconds),
  ``idle`` (cursor), ``error``, and ``alive`` every second from a thread of its own (the
  heartbeat: a stopped or hung worker falls silent, and the service reports it stalled).
- It also asks Linux to SIGTERM it when the parent dies (``PR_SET_PDEATHSIG``), so neither a
  ``kill -9`` of the service nor a lost pipe can leave it running.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from workbench.recall.cpu_share import CpuShare, spare_now, threads_for

CHUNK = 256  # observations read (and cache-checked) per query
BATCH = 64  # texts embedded and written per transaction
# Spare cores measured again this often while embedding. 10 s, not 60: a change of lanes
# costs nothing now (it rebuilt the runtime's pool before), and a worker started during an
# import measured one spare core and kept one lane for its first two minutes at 100k
# (~165 texts/s against ~260 with two; bench/vectors_catch_up.py, stop 33).
ADAPT_S = 10.0
EXIT_WRONG_MODEL = 3
EXIT_NO_MODEL = 4
EXIT_CAUGHT_UP = 5
HEARTBEAT_S = 1.0  # the service calls a worker silent for STALL_S (worker_process) stalled
NICE = 10  # the service's request loop and worker come first on a 2-core machine


def die_with_parent(parent_pid: int | None) -> None:
    """Linux: SIGTERM this process when the parent exits (``prctl(PR_SET_PDEATHSIG)``).

    ``parent_pid``: the service that started us. Compared by pid, not against 1, because a
    service running as PID 1 (a container's entrypoint) is a live parent.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except OSError:
        pass
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(0)  # the parent died before prctl took effect: we were re-parented


class Commands:
    """Reads stdin lines on a thread; EOF ends the process (the parent is gone)."""

    def __init__(self) -> None:
        self.wake = threading.Event()
        self.rescan = False
        self._ids: set[int] = set()
        self._ids_lock = threading.Lock()
        threading.Thread(target=self._read, name="embed-worker-stdin", daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ["rescan"]:
                self.rescan = True
            elif words[:1] == ["ids"]:
                named = {int(w) for w in words[1:] if w.isdigit()}
                with self._ids_lock:
                    self._ids |= named
            self.wake.set()
        os._exit(0)

    def take_ids(self, most: int) -> list[int]:
        """Up to ``most`` of the ids named so far (ascending), removed from the set."""
        with self._ids_lock:
            taken = sorted(self._ids)[:most]
            self._ids.difference_update(taken)
        return taken


_say_lock = threading.Lock()


def say(event: str, **fields: Any) -> None:
    with _say_lock:  # the heartbeat thread writes too: one whole line at a time
        sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
        sys.stdout.flush()


def heartbeat(every_s: float = HEARTBEAT_S) -> None:
    """Say ``alive`` every ``every_s`` from a thread of its own, so the service can tell a
    worker that is idle from one that is stopped (SIGSTOP) or hung: only a running process
    keeps saying it."""

    def beat() -> None:
        while True:
            say("alive")
            time.sleep(every_s)

    threading.Thread(target=beat, name="embed-worker-heartbeat", daemon=True).start()


@dataclass(frozen=True)
class Choice:
    """The service's two settings that pick the model (``embed.EmbedderChoice``)."""

    embedder: str
    embed_runtime: str


def run(
    db: str,
    model: str,
    threads: int | None,
    from_id: int = 0,
    linger: float | None = None,
    choice: Choice = Choice("minilm", "onnx"),
) -> int:
    """Embed what the cache lacks in the store ``db``, in id order from ``from_id``; return
    the exit code.

    ``linger``: seconds idle (caught up, no wake) before exiting with ``EXIT_CAUGHT_UP``;
    None = never (the service passes ``embed_worker_linger_s``).
    """
    from workbench.recall.embed import load_embedder
    from workbench.store.connection import connect

    heartbeat()
    share = CpuShare()
    chosen = threads or _threads_now(share)
    embedder, why = load_embedder(choice, threads=chosen)
    if embedder is None:
        say("error", reason=why)
        return EXIT_NO_MODEL
    if embedder.name != model:
        say("error", reason=f"worker loaded {embedder.name}, the service queries {model}")
        return EXIT_WRONG_MODEL
    say("ready", model=embedder.name, reason=why, threads=chosen)
    commands = Commands()
    conn = connect(db)
    cursor = max(0, from_id)
    adapted = time.monotonic()
    while True:
        if threads is None and time.monotonic() - adapted >= ADAPT_S:
            adapted = time.monotonic()
            wanted = _threads_now(share)
            if wanted != chosen:
                # Trigger: the box got busier or quieter. Why: an idle core left unused
                # wastes half of the rate. Outcome: the next batches run in the new
                # number of lanes.
                getattr(embedder, "set_threads", lambda _n: None)(wanted)
                chosen = wanted
                say("threads", threads=chosen)
        named = commands.take_ids(CHUNK)
        if named:
            rows = conn.execute(
                "SELECT id, title, subtitle, narrative, facts, concepts FROM observations"
                " WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
                (json.dumps(named),),
            ).fetchall()
            _embed_missing(conn, embedder, model, rows, cursor, cursor)
            continue
        rows = conn.execute(
            "SELECT id, title, subtitle, narrative, facts, concepts FROM observations"
            " WHERE id > ? ORDER BY id LIMIT ?",
            (cursor, CHUNK),
        ).fetchall()
        if rows:
            _embed_missing(conn, embedder, model, rows, cursor, int(rows[-1][0]))
            cursor = int(rows[-1][0])
            continue
        say("idle", cursor=cursor)
        woke = commands.wake.wait(linger)
        commands.wake.clear()
        if not woke and linger is not None:
            say("asleep", cursor=cursor)
            return EXIT_CAUGHT_UP
        if commands.rescan:
            commands.rescan = False
            cursor = 0


def _threads_now(share: CpuShare) -> int:
    """One thread per spare core measured since the last call (``background_threads`` when
    /proc cannot say)."""
    from workbench.recall.embed import background_threads

    spare = share.spare()
    if spare is None:
        spare = spare_now()
    if spare is None:
        return background_threads()
    return threads_for(spare, share.cores)


def _embed_missing(
    conn: Any, embedder: Any, model: str, rows: list[Any], before: int, after: int
) -> None:
    """Embed and store the texts of ``rows`` the cache lacks, a batch per transaction.

    ``batch`` lines report the cursor ``before`` the rows until the last batch, which
    reports ``after``: a worker restarted from a reported cursor never skips a text of a
    chunk it had only half stored (batches go by length, not by id)."""
    from workbench.recall import vectors

    texts: dict[str, str] = {}
    owners: dict[str, list[int]] = {}
    for row in rows:
        text = vectors.embed_text(row)
        key = vectors.text_hash(text)
        texts[key] = text
        owners.setdefault(key, []).append(int(row[0]))
    have = vectors.cached_hashes(conn, model, list(texts), embedder.dim)
    # Similar lengths share a batch: less padding (the embedder pads to the longest).
    missing = sorted((h for h in texts if h not in have), key=lambda h: len(texts[h]))
    parts = [missing[start : start + BATCH] for start in range(0, len(missing), BATCH)]
    began = time.monotonic()
    for n, (part, matrix) in enumerate(zip(parts, _embedded(embedder, texts, parts), strict=True)):
        # Only the texts still held by a memory: one forgotten meanwhile stays forgotten.
        found = {h: matrix[i] for i, h in enumerate(part)}
        vectors.store_vectors(conn, model, found, owners=owners)
        now = time.monotonic()
        say(
            "batch",
            cursor=after if n == len(parts) - 1 else before,
            embedded=len(part),
            seconds=round(now - began, 4),
        )
        began = now


def _embedded(embedder: Any, texts: dict[str, str], parts: list[list[str]]) -> Iterator[Any]:
    """Each part's vectors in turn: streamed by the ONNX embedder's lanes, which go on with
    the next parts while this thread stores one (``OnnxEmbedder.embed_groups``), else one
    ``embed`` call per part (torch, static)."""
    groups = [[texts[h] for h in part] for part in parts]
    stream = getattr(embedder, "embed_groups", None)
    if stream is not None:
        yield from stream(groups)
    else:
        for group in groups:
            yield embedder.embed(group)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.recall.embed_worker")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--model", required=True, help="the embedder name the service queries")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--parent-pid", type=int, default=None, help="exit once it is gone")
    parser.add_argument("--from-id", type=int, default=0, help="start after this observation")
    parser.add_argument("--linger", type=float, default=None, help="idle seconds, then exit 5")
    parser.add_argument("--db", default=None, help="the store (default: DATA_DIR/workbench.db)")
    parser.add_argument("--embedder", default="minilm", help="the service's embedder setting")
    parser.add_argument("--runtime", default="onnx", help="the service's embed_runtime")
    args = parser.parse_args(argv)
    db = args.db or os.path.join(args.data_dir, "workbench.db")  # Settings.db_path
    die_with_parent(args.parent_pid)
    try:
        os.nice(NICE)
    except OSError:
        pass
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    try:
        choice = Choice(args.embedder, args.runtime)
        code = run(db, args.model, args.threads, args.from_id, args.linger, choice)
    except KeyboardInterrupt:
        code = 0
    # os._exit: the stdin thread is blocked in a read, and an interpreter shutting down
    # around it can abort on the stdin lock instead of exiting with our code.
    with _say_lock:
        sys.stdout.flush()
        os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
