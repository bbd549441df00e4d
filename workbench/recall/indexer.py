"""The background embedding pipeline: keeps the FAISS index in step with the observations.

Why a thread of its own: embedding costs ~8 ms per text with MiniLM, and the worker stores an
observation in well under a millisecond; if the worker embedded, the model would set the pace
of compression. So the worker only *notifies* (``notify``) after a commit, and this thread
catches up. It also owns every change to the index, so nothing else needs to coordinate.

Catch-up, not bookkeeping: every pass compares the index with the ``observations`` table
(a cheap ``count``/``max(id)`` fingerprint first, the id sets when they differ), embeds the
observations that have no vector and drops the vectors of observations that are gone. So
whatever added or removed rows — the worker, ``/api/memory/save``, ``/api/import``, a
recompress, a delete — the index converges within ``poll_s`` without any of them knowing.

Lifecycle: ``run`` loads the embedder (the model is loaded once, here, lazily in the
background so the service answers at once), then the persisted index (or rebuilds it from
the SQLite cache: no model calls for cached texts), then loops. When the model or FAISS is
unavailable the state says why, semantic search reports unavailable, and ``reindex`` still
rebuilds the FTS tables. ``reindex`` runs on this thread too: the old index keeps answering
searches until the new one is swapped in, and ingest is blocked only by the FTS rebuild's
transaction (~1 s at 100k observations). A switch of ``vector_index`` works the same way: the
saved index of the previous kind answers until the new kind is built from the cache, and its
files are removed once the new kind is saved (``index_files``).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.recall import index_files, token_rows, vectors
from workbench.recall.embed import Embedder, background_threads, load_embedder
from workbench.recall.heap_trim import trim_heap
from workbench.recall.static_tier import StaticTier
from workbench.recall.tier_note import rebuilding_note
from workbench.recall.vectors import VectorIndex
from workbench.recall.worker_process import EmbedWorkerProcess, plan_start
from workbench.settings import Settings
from workbench.store import fts_rebuild
from workbench.store.connection import atomic
from workbench.store.database import Store

log = logging.getLogger("workbench.recall")

CHUNK = 256  # observations per cache query / index add
FULL_CHECK_S = 30.0  # a full id-set comparison at least this often
QUERY_CACHE = 256
EDITS_PER_PASS = 4096  # observation_edits rows handled per pass (a bulk edit takes a few)
RENAME_S = 10.0  # behind ids a worker has passed are named to it again this often
# Passes at most this often while the embedding worker embeds: each of its batches (several a
# second) woke a pass, ~0.1 of a core at 100k taken from the worker on 2 cores (issue 21).
# What waits is only MiniLM's index catching up on vectors already cached, and new memories
# reaching the static tier: half a second against the minute a burst may lag.
WORKER_PASS_GAP_S = 0.5
# ``token_rows`` batches per pass: a 100k store's words are made in ~10 passes after an
# upgrade or a reindex (~1 s of this thread each), one batch of new memories after that.
TOKEN_BATCHES_PER_PASS = 20


@dataclass
class ReindexJob:
    """Progress and outcome of one ``reindex`` (``GET /api/index/status``)."""

    id: int
    state: str = "queued"  # queued | running | done | failed
    phase: str = "queued"  # queued | fts | vectors | saving | done
    done: int = 0
    total: int = 0
    embedded: int = 0  # model calls' worth of texts embedded now
    reused: int = 0  # vectors taken from the embeddings cache
    pruned: int = 0  # cache rows of texts no observation has any more
    fts_seconds: float = 0.0
    seconds: float = 0.0
    vectors: str = "pending"  # rebuilt | skipped: <why>
    error: str | None = None
    started_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Indexer(threading.Thread):
    """Owns the embedder and the vector index of one store; see the module docstring."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        embedder_factory: Callable[[Settings], tuple[Embedder | None, str]] = load_embedder,
        *,
        poll_s: float = 2.0,
        save_interval_s: float = 30.0,
        ingest_busy: Callable[[], bool] | None = None,
        embed_process: bool = False,
    ) -> None:
        super().__init__(name="workbench-indexer", daemon=True)
        # True while hooks are posting a burst of events (the service passes the worker's view).
        self._ingest_busy = ingest_busy or (lambda: False)
        self.store = store
        self.settings = settings
        self._factory = embedder_factory
        self.poll_s = poll_s
        self.save_interval_s = save_interval_s
        self.embedder: Embedder | None = None
        self.index: VectorIndex | None = None
        self.state = "starting"  # starting | loading | ready | unavailable | disabled | error
        self.reason = "starting"
        self.pass_error: str | None = None  # the last pass's failure, until one succeeds
        self.observations = 0  # rows in the table at the last pass
        self.embedded_total = 0
        self.reused_total = 0
        self.job: ReindexJob | None = None
        self._jobs = 0
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._job_lock = threading.Lock()
        self._last_save = time.monotonic()
        # A pass removed vectors (a forget, an edit): the next save is not put off by the
        # interval, so the saved file stops holding them within a pass (see ``_save``).
        self._removed = False
        self._last_full = 0.0
        self.ranker = IndexRanker(self)
        # With ``embed_process`` documents are embedded by a child process (embed_worker.py)
        # and this thread only adds vectors from the cache; ``embedder`` then answers queries.
        self.embed_process = embed_process
        self.process: EmbedWorkerProcess | None = None
        # The two-tier index's fast tier (static_tier.py): with the worker only, it holds the
        # observations MiniLM has not reached yet.
        self.static: StaticTier | None = None
        self._behind: set[int] = set()  # observations with no cached vector yet
        self._seen_max_id = 0  # max(observations.id) at the last pass
        self._last_rescan = 0.0  # when every passed id was last named to the worker
        self._named: set[int] = set()  # ids named to it since then
        # A switch of ``vector_index`` under way: the saved index of another kind answers
        # searches while the configured kind is built beside it (``_switch_kind``).
        self.switching: dict[str, Any] | None = None
        # The index being filled from the embeddings cache at start (no usable saved set):
        # ``(done, total)`` of the first pass, None once it is through (``sync``). Memories
        # are behind meanwhile for that reason, not the worker's (``tier_note``).
        self.filling: tuple[int, int] | None = None
        # The index a switch or a reindex fills beside the one answering: both are held
        # until the swap, so ``memoryBytes`` counts both.
        self._building: VectorIndex | None = None
        self._loaded = ""  # what ``load`` said of the embedder (the reason's first part)
        # ``observation_tokens`` (``token_rows``): the id the fill goes on after, whether its
        # sweep reached the last observation, and when the sweep began.
        self._tokens_after = 0
        self._tokens_done = False
        self._tokens_sweep = time.monotonic()

    # ----- control (any thread) ----------------------------------------------------------
    def notify(self, *_: Any) -> None:
        """New or removed observations: catch up soon. Takes any args (a worker listener)."""
        if self.process is not None:
            self.process.wake()
        self._wake.set()

    def request_reindex(self) -> ReindexJob:
        """Queue a reindex (or return the one already queued or running)."""
        with self._job_lock:
            if self.job is not None and self.job.state in ("queued", "running"):
                return self.job
            self._jobs += 1
            self.job = ReindexJob(id=self._jobs)
        self._wake.set()
        return self.job

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._wake.set()
        if self.is_alive():
            self.join(timeout)
        if self.process is not None:
            self.process.stop()
        if not self.is_alive():
            self._save(force=False)

    def status(self) -> dict[str, Any]:
        index = self.index
        indexed = len(index) if index is not None else 0
        return {
            "state": self.state,
            "reason": self.reason,
            "embedder": getattr(self.embedder, "name", self.settings.embedder),
            "dim": getattr(self.embedder, "dim", None),
            "index": self.settings.vector_index,
            # Whether searches scan the prefilter's coarse codes first (vector_prefilter.py).
            "prefiltered": index.prefiltered if index is not None else False,
            "indexed": indexed,
            "observations": self.observations,
            "pending": max(0, self.observations - indexed) if index is not None else None,
            "worker": self.process.health() if self.process is not None else None,
            # Whether this process has torch loaded (the ONNX runtime never needs it): ~300 MB.
            "torchImported": "torch" in sys.modules,
            "embeddedTotal": self.embedded_total,
            "reusedTotal": self.reused_total,
            "memoryBytes": self.memory_bytes(),
            "reindex": self.job.to_json() if self.job else None,
            "switching": dict(self.switching) if self.switching is not None else None,
            "static": self.static.status() if self.static is not None else None,
            "unsearchable": self.unsearchable(),
            "tiers": self.tiers(),
            "wordsKept": self._tokens_done if token_rows.wanted(self.settings) else None,
        }

    def memory_bytes(self) -> int:
        """RAM of the vector indexes held: the one answering, and the one a switch or a
        reindex is filling beside it (it counted the first alone)."""
        index, building = self.index, self._building
        held = [index] if building is None or building is index else [index, building]
        return sum(each.memory_bytes() for each in held if each is not None)

    def tiers(self) -> dict[str, int] | None:
        """Which tier finds each observation by meaning: MiniLM's index, the static tier
        (MiniLM has not reached it yet), or neither (full text only). No query."""
        index = self.index
        if index is None or self.state != "ready":
            return None
        static = len(self.static) if self.static is not None else 0
        return {
            "minilm": len(index),
            "static": static,
            "fullTextOnly": max(0, self.observations - len(index) - static),
        }

    def health(self) -> dict[str, Any]:
        """The compact block ``/api/health`` carries (no queries: hooks poll health)."""
        full = self.status()
        keys = ("state", "reason", "embedder", "index", "indexed", "pending")
        body = {k: full[k] for k in keys}
        body["reindexing"] = bool(self.job and self.job.state in ("queued", "running"))
        stuck = self.stuck()
        if stuck is not None:  # never "ready" while the index cannot be brought up to date
            body["state"], body["reason"] = "error", stuck
        return body

    def stuck(self) -> str | None:
        """Why the index is not being kept up to date (a failing pass, a failed reindex)."""
        if self.pass_error is not None:
            return (
                f"the vector index is not being updated: every pass fails ({self.pass_error}); "
                "the service log has the traceback"
            )
        job = self.job
        if job is not None and job.state == "failed":
            return (
                f"the last reindex failed ({job.error}); run `workbench reindex` again, and "
                "see the service log if it fails again"
            )
        return None

    def behind(self, *, fresh: bool = True) -> int | None:
        """Observations not in the vector index yet (None when there is no index).

        ``fresh`` adds the rows committed since the indexer's last pass (one ``max(id)``
        lookup): what a search reports. Without it, no query at all: what health reports.
        """
        index = self.index
        if index is None or self.state != "ready":
            return None
        if not fresh:
            return max(0, self.observations - len(index))
        # Rows added since the last pass (ids only grow): one indexed lookup, not a count.
        newest = self.store.conn.execute("SELECT coalesce(max(id), 0) FROM observations")
        unseen = max(0, int(newest.fetchone()[0]) - self._seen_max_id)
        return max(0, self.observations - len(index)) + unseen

    def unsearchable(self) -> int | None:
        """Observations with a vector in neither tier (found by full text only); None when
        there is no index. No query: the counts of the last pass."""
        index = self.index
        if index is None or self.state != "ready":
            return None
        static = len(self.static) if self.static is not None else 0
        return max(0, self.observations - len(index) - static)

    def vectors_health(self) -> dict[str, Any]:
        """``/api/health``'s ``vectors`` block: the embedding worker and the backlog."""
        worker = self.process.health() if self.process is not None else None
        return {
            "state": self.state,
            "mode": "process" if self.process is not None else "in-service",
            "pid": worker["pid"] if worker else None,
            "worker": worker,
            "behind": self.behind(fresh=False),
            "staticIndexed": len(self.static) if self.static is not None else None,
            "unsearchable": self.unsearchable(),
        }

    # ----- the thread --------------------------------------------------------------------
    def run(self) -> None:
        self.load()
        while not self._stopping.is_set():
            try:
                if self.job is not None and self.job.state == "queued":
                    self.reindex(self.job)
                elif self.state == "ready":
                    self.sync()
                    if self.switching is not None:
                        self._switch_kind()
                    self._save(force=False)
                    self._prepare_prefilter()
                try:
                    self._fill_tokens()
                except Exception:  # derived and optional: searches tokenize what has no row
                    log.warning("could not keep the memories' words (token_rows)", exc_info=True)
                self.pass_error = None
            except Exception as exc:  # the loop must outlive a bad moment (disk full…)
                log.exception("indexer pass failed")
                self.reason = f"last pass failed: {exc}"
                self.pass_error = f"{type(exc).__name__}: {exc}"
                self._stopping.wait(1.0)
            if self.process is not None:
                self.process.supervise()
                if self._release_static():
                    trim_heap()
            self._wake.wait(self.poll_s)
            self._wake.clear()
            # Coalesce a burst of notifications (a worker batch) into one pass.
            self._stopping.wait(0.05)
            self._worker_pass_gap()

    def _prepare_prefilter(self) -> None:
        """Build the index's prefilter when its live count asks (``vector_prefilter.py``),
        after the pass's save: ~2 s of this thread's CPU at 100k, once per doubling.

        Not while the embedding worker embeds: a catch-up's index doubles several times, and
        each build took CPU from the worker (a 100k import's full MiniLM vectors 283 → 295 s,
        quiet, ``bench/vectors_catch_up.py``); searches scan exactly until it is idle.
        """
        process = self.process
        if process is not None and process.state == "embedding":
            return
        index = self.index
        if index is not None and index.prepare_prefilter():
            trim_heap()  # the build's scratch: the codebooks' sample and decoded chunks

    def _fill_tokens(self) -> None:
        """Keep each memory's words made for the second stage (``token_rows``): a few batches
        a pass while a sweep over the observations finds rows missing; then only new ids, and
        a new sweep from the first id every ``FULL_CHECK_S`` (an edit deletes its row).

        Not while the embedding worker embeds: its catch-up is what the CPU is for then, and
        a search tokenizes what has no row (as it did before the rows). Nor while hooks post a
        burst: the pass returns (before a batch, and between two) rather than wait for the
        burst to end, so the next pass gives the burst's memories their vectors. Waiting
        between the batches held this thread ~41 s of a 50 events/s burst right after a 100k
        catch-up (20 batches, up to 2 s each), when no new memory reached any tier
        (``bench/vectors_catch_up.py``, stop 47).
        """
        process = self.process
        if (
            (process is not None and process.state == "embedding")
            or not token_rows.wanted(self.settings)
            or self._ingest_busy()
        ):
            return
        conn = self.store.conn
        newest = int(conn.execute("SELECT coalesce(max(id), 0) FROM observations").fetchone()[0])
        now = time.monotonic()
        if self._tokens_done:
            if now - self._tokens_sweep >= FULL_CHECK_S:
                self._tokens_after, self._tokens_done, self._tokens_sweep = 0, False, now
            elif newest <= self._tokens_after:
                return
        table = token_rows.table_for(self.settings)
        for _ in range(TOKEN_BATCHES_PER_PASS):
            filled = token_rows.fill(conn, table, self._tokens_after)
            self._tokens_after = max(filled.after, newest) if filled.done else filled.after
            self._tokens_done = filled.done
            if filled.done or self._stopping.is_set() or self._ingest_busy():
                return

    def _worker_pass_gap(self) -> None:
        """While the embedding worker embeds, the next pass waits up to ``WORKER_PASS_GAP_S``;
        it goes at once when the worker stops embedding (caught up: its last vectors are
        indexed before it lingers and exits)."""
        process = self.process
        until = time.monotonic() + WORKER_PASS_GAP_S - 0.05
        while process is not None and process.state == "embedding" and time.monotonic() < until:
            if self._stopping.wait(0.05):
                return

    def load(self) -> None:
        """Load the embedder and the index (the thread does this first; tests call it)."""
        if self.settings.embedder == "none":
            self.state, self.reason = "disabled", load_embedder(self.settings)[1]
            return
        self.state, self.reason = "loading", f"loading the {self.settings.embedder} embedder"
        try:
            import faiss  # noqa: F401  (checked first: it is cheap, the model is not)
        except ImportError as exc:
            self.state = "unavailable"
            self.reason = f"FAISS cannot be imported ({exc}); install it: pip install faiss-cpu"
            return
        embedder, why = self._factory(self.settings)
        if embedder is None:
            self.state, self.reason = "unavailable", why
            return
        if self.embed_process:
            # Started from this thread, which lives as long as the service: the child's
            # PR_SET_PDEATHSIG fires when the thread that forked it ends.
            # Not started yet: the first pass says what is behind, and the worker starts
            # there (``_prod_worker``), instead of re-hashing every row from id 0; with
            # nothing behind it is not started at all until memories fall behind.
            self.process = EmbedWorkerProcess(self.settings, embedder.name, self._wake.set)
            self.static = StaticTier.load(self.settings)
        kind, where = self.settings.vector_index, self.settings.index_dir
        index, how = VectorIndex.load(
            where, embedder.name, embedder.dim, kind, **self._index_options()
        )
        if index is not None:
            index_files.remove_replaced(where, embedder.name, kind)
        else:
            log.info("vector index: %s; rebuilding from the embeddings cache", how)
            index = self._previous_kind(embedder)
            if index is not None:
                how = (
                    f"the saved {index.kind} index answers while the {kind} index is built "
                    "from the embeddings cache"
                )
                self.switching = {"from": index.kind, "to": kind, "done": 0, "total": 0}
            else:
                how = "rebuilding the index from the embeddings cache"
                index = self._fresh_index(embedder)
                self.filling = (0, 0)  # the first pass (``sync``) knows the total
        self.embedder, self.index = embedder, index
        trim_heap()  # the loads' scratch (see heap_trim.py): ~40 MiB of RSS at 100k
        self._loaded = why
        self.state, self.reason = "ready", f"{why}; {how}"

    def _index_options(self) -> dict[str, Any]:
        """When and how widely a graph index walks its graph, and from when an exact-scan
        index scans its prefilter's codes first (the settings)."""
        return {
            "graph_from": self.settings.vector_graph_from,
            "graph_ef": self.settings.vector_graph_ef,
            "prefilter_from": (
                self.settings.vector_prefilter_from if self.settings.vector_prefilter else None
            ),
        }

    def _previous_kind(self, embedder: Embedder) -> VectorIndex | None:
        """The newest loadable saved index of this model in another kind (a switch of
        ``vector_index``), or None.

        Trigger: the configured kind has no usable saved set. Why: filling a new kind from
        the cache takes seconds to a minute at 100k (a graph costs ~350 µs per vector), and a
        search meanwhile saw only the part filled so far. Outcome: the previous kind answers,
        complete, until ``_switch_kind`` swaps the new one in; its files stay until then.
        """
        where = self.settings.index_dir
        for kind in index_files.saved_kinds(
            where, embedder.name, besides=self.settings.vector_index
        ):
            index, how = VectorIndex.load(
                where, embedder.name, embedder.dim, kind, **self._index_options()
            )
            if index is not None:
                log.info("vector index: %s; it answers until the new kind is built", how)
                return index
            log.info("vector index: %s", how)
        return None

    def _switch_kind(self) -> None:
        """Build the configured kind from the cache beside the one answering, then swap.

        Trigger: ``load`` found only another kind's saved index (``switching``). Why: a
        search must never be answered by a half-filled index as if it were whole. Outcome:
        the old index answers (memories added meanwhile are behind, as during a reindex)
        until the new one holds every cached vector; it is swapped in, caught up, saved, and
        only then are the old kind's files removed (``_save``). Stopped midway, nothing is
        swapped or written: the next start serves the old kind and builds again. Memory:
        both indexes are held while the new one fills (at 100k, +77 MB for ``fp16``).
        """
        embedder, switching = self.embedder, self.switching
        assert embedder is not None
        assert switching is not None
        conn = self.store.conn
        switching["total"] = int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])
        switching["done"] = 0  # a failed attempt (the loop retries) starts over
        fresh = self._fresh_index(embedder)
        fresh_static = self.static.empty_copy() if self.static is not None else None
        self._building = fresh
        try:
            for ids in self._id_chunks():
                self._add(fresh, embedder, ids, fresh_static)
                switching["done"] += len(ids)
            if self._stopping.is_set():
                return
            self.index, self.static, self.switching = fresh, fresh_static, None
        finally:
            self._building = None
        self.reason = (
            f"{self._loaded}; the {fresh.kind} index built from the embeddings cache"
            f" (it replaced the saved {switching['from']} index)"
        )
        trim_heap()  # the old index's pages
        self.sync(full=True)  # rows added or deleted while the new kind was built
        self._save(force=True)

    def _id_chunks(self) -> Iterator[list[int]]:
        """Every observation id, ``CHUNK`` at a time in id order, until stopping (a rebuild)."""
        last = 0
        while not self._stopping.is_set():
            ids = [
                int(r[0])
                for r in self.store.conn.execute(
                    "SELECT id FROM observations WHERE id > ? ORDER BY id LIMIT ?", (last, CHUNK)
                )
            ]
            if not ids:
                return
            yield ids
            last = ids[-1]

    def _fresh_index(self, embedder: Embedder) -> VectorIndex:
        return VectorIndex(
            embedder.name, embedder.dim, self.settings.vector_index, **self._index_options()
        )

    # ----- catch-up ----------------------------------------------------------------------
    def sync(self, *, full: bool = False) -> tuple[int, int]:
        """Bring the index in step with the table; return (added, removed)."""
        index, embedder = self.index, self.embedder
        if index is None or embedder is None:
            return 0, 0
        conn = self.store.conn
        count, max_id = conn.execute(
            "SELECT count(*), coalesce(max(id), 0) FROM observations"
        ).fetchone()
        self.observations, self._seen_max_id = int(count), int(max_id)
        now = time.monotonic()
        full = full or now - self._last_full >= FULL_CHECK_S
        edited = self._take_edits(index)
        if not full and not edited and count == len(index) and max_id == index.max_id:
            if self.filling is not None:  # nothing to fill (an empty store)
                self._fill_done()
            self._prod_worker()
            return 0, 0
        live = index.ids()
        # Behind (no cached vector yet): ids past the index's end, and the ones the embedding
        # worker has not reached; each pass looks them up in the cache again.
        start_at = max(index.max_id, self._behind_floor())
        newer = {
            int(r[0]) for r in conn.execute("SELECT id FROM observations WHERE id > ?", (start_at,))
        }
        behind = self._behind - live
        # Trigger: the worker embeds in id order and says how far it got. Why: re-reading
        # and re-hashing every behind row on each pass (each worker batch wakes us) cost
        # seconds per pass at 100k behind, taken from the worker on a 2-core machine.
        # Outcome: only behind ids the worker has passed are looked up in the cache again;
        # the rest stay behind (and in the static tier) until it gets there.
        waiting = self._not_reached(behind)
        fresh = newer - live
        if not full and len(live) + len(fresh | behind | edited) == count:
            # the common case: only new rows, at the end (and edited ones)
            added, removed = sorted(fresh | (behind - waiting) | edited), set()
        else:
            self._last_full = now
            db_ids = {int(r[0]) for r in conn.execute("SELECT id FROM observations")}
            added, removed = sorted(db_ids - live - waiting), live - db_ids
            self._behind &= db_ids
        if removed:
            self._removed = True
            vectors.forget(conn, index.remove(removed))
            if self.static is not None:
                self.static.drop(removed)
        filling = self.filling is not None
        for start in range(0, len(added), CHUNK):
            if filling:
                self._filled(start, len(added))
            if self.process is None:
                self._yield_to_ingest()  # only the in-service model competes with ingest
            if self._stopping.is_set():
                break
            self._add(index, embedder, added[start : start + CHUNK], self.static)
        if filling and not self._stopping.is_set():
            self._fill_done()
        if len(added) >= CHUNK or len(removed) >= CHUNK:
            trim_heap()  # a bulk pass (the first at start: every vector from the cache)
        self._prod_worker()
        return len(added), len(removed)

    def _filled(self, done: int, total: int) -> None:
        """Progress of the start's fill from the cache, in ``filling`` and the reason."""
        self.filling = (done, total)
        self.reason = f"{self._loaded}; {rebuilding_note(done, total)}"

    def _fill_done(self) -> None:
        self.filling = None
        self.reason = f"{self._loaded}; index rebuilt from the embeddings cache"

    def _take_edits(self, index: VectorIndex) -> set[int]:
        """Observations edited in place since the last pass (``observation_edits``, m014):
        their vectors leave both tiers, and they are embedded again like new rows.

        The cached vector of a text no observation has any more is dropped (it can be
        inverted to the replaced words); an edit that kept the text (a project move) keeps
        it, so the re-add costs no model call.
        """
        conn = self.store.conn
        log_rows = conn.execute(
            "SELECT seq, observation_id FROM observation_edits ORDER BY seq LIMIT ?",
            (EDITS_PER_PASS,),
        ).fetchall()
        if not log_rows:
            return set()
        ids = {int(r[1]) for r in log_rows}
        rows = conn.execute(
            "SELECT id, title, subtitle, narrative, facts, concepts FROM observations"
            " WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(ids)),),
        ).fetchall()
        current = {vectors.text_hash(vectors.embed_text(r)) for r in rows}
        unused = index.remove(ids)
        self._removed = True
        if self.static is not None:
            self.static.drop(ids)
        self._behind -= ids
        vectors.forget(conn, [h for h in unused if h not in current])
        with atomic(conn):
            conn.execute("DELETE FROM observation_edits WHERE seq <= ?", (int(log_rows[-1][0]),))
        return {int(r["id"]) for r in rows}

    def _release_static(self) -> bool:
        """Caught up and the worker asleep: the static tier lets go of its model's table."""
        process, static = self.process, self.static
        if process is None or static is None or self._behind or process.state != "asleep":
            return False
        return static.release()

    def _not_reached(self, behind: set[int]) -> set[int]:
        """The behind ids past the embedding worker's cursor (not embedded yet, surely)."""
        process = self.process
        if process is None or process.state == "idle" or not behind:
            return set()
        cursor = process.cursor
        return {i for i in behind if i > cursor}

    def _behind_floor(self) -> int:
        """Ids at or below this are all in the index or in ``_behind`` (nothing unseen)."""
        return max(self._behind, default=0)

    def _prod_worker(self) -> None:
        """Start the worker where the work is, wake an idle one, name the ids it has passed.

        Trigger: memories behind and no worker running: none started yet (the first pass
        starts none when nothing is behind: ``rest``, issue 21's RSS), or asleep (it exited
        once caught up, to free its model). Outcome: one starts before the dense tail of
        what is behind and is told the scattered rest (``plan_start``): no re-reading from
        id 0. Behind ids a running worker has passed (edited texts) are named to it at once,
        and again every ``RENAME_S``.
        """
        process = self.process
        if process is None or self._stopping.is_set():
            return
        if not self._behind:
            if process.proc is None:
                process.rest()
            return
        process.supervise()  # notice an exit since the last pass
        if process.proc is None or process.state == "asleep":
            from_id, named = plan_start(sorted(self._behind), self._seen_max_id)
            if process.resume(from_id):
                self._tell_worker(process, named)
            return
        if process.state in ("failed", "restarting", "stopped"):
            return
        passed = sorted(i for i in self._behind if i <= process.cursor)
        if passed:
            self._tell_worker(process, passed)
        if process.state == "idle" and max(self._behind) > process.cursor:
            process.wake()

    def _tell_worker(self, process: EmbedWorkerProcess, ids: list[int]) -> None:
        """Tell the worker of ``ids`` it would not reach by its cursor: the new ones now,
        all of them again every ``RENAME_S`` (a worker restarted meanwhile forgot them)."""
        if not ids:
            return
        now = time.monotonic()
        if now - self._last_rescan >= RENAME_S:
            self._last_rescan, self._named = now, set()
        fresh = [i for i in ids if i not in self._named]
        if fresh:
            self._named.update(fresh)
            process.embed_ids(fresh)

    def _yield_to_ingest(self, most_s: float = 2.0) -> None:
        """Pause embedding while hooks post a burst, for at most ``most_s`` per chunk.

        Trigger: events arrived in the last moments. Why: the model shares the GIL and the CPU
        with the request loop, and on 2 cores a catch-up embedding cut enqueue throughput
        several-fold. Outcome: vectors lag a burst by seconds; hooks never wait for them.
        """
        deadline = time.monotonic() + most_s
        while self._ingest_busy() and time.monotonic() < deadline:
            if self._stopping.wait(0.05):
                return

    def _add(
        self,
        index: VectorIndex,
        embedder: Embedder,
        ids: Sequence[int],
        static: StaticTier | None = None,
    ) -> tuple[int, int]:
        """Embed (or fetch from the cache) and add one chunk; return (embedded, reused).

        ``static``: the fast tier takes the chunk's observations without a MiniLM vector and
        lets go of those that have one now (the upgrade).
        """
        import numpy as np

        rows = self.store.conn.execute(
            "SELECT id, project, title, subtitle, narrative, facts, concepts FROM observations"
            " WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (json.dumps(list(ids)),),
        ).fetchall()
        if not rows:
            return 0, 0
        texts = {int(r["id"]): vectors.embed_text(r) for r in rows}
        hashes = {i: vectors.text_hash(t) for i, t in texts.items()}
        if self.process is None:
            got = vectors.vectors_for(
                self.store.conn, embedder, {hashes[i]: texts[i] for i in texts}
            )
        else:  # the embedding worker fills the cache: take what is there, the rest is behind
            cached = vectors.cached_vectors(
                self.store.conn, embedder.name, hashes.values(), embedder.dim
            )
            got = vectors.Embedded(cached, reused=len(cached))
        order = [i for i in texts if hashes[i] in got.vectors]
        lacking = [i for i in texts if hashes[i] not in got.vectors]
        self._behind.difference_update(texts)
        self._behind.update(lacking)
        project_of = {int(r["id"]): str(r["project"]) for r in rows}
        if static is not None:
            static.put(
                lacking,
                [texts[i] for i in lacking],
                [hashes[i] for i in lacking],
                [project_of[i] for i in lacking],
            )
        if not order:
            return got.embedded, got.reused
        projects = [project_of[i] for i in order]
        index.add(
            order,
            [hashes[i] for i in order],
            np.stack([got.vectors[hashes[i]] for i in order]),
            projects=projects,
        )
        if static is not None:  # after the add: a search never sees neither tier hold one
            static.drop(order)
        self.embedded_total += got.embedded
        self.reused_total += got.reused
        return got.embedded, got.reused

    def _save(self, *, force: bool) -> None:
        index = self.index
        if index is None or not (index.dirty or force):
            return
        if (
            not force
            and not self._removed
            and time.monotonic() - self._last_save < self.save_interval_s
            and not (self._stopping.is_set())
        ):
            return
        try:
            index.save(self.settings.index_dir)
            self._removed = False
            if index.kind == self.settings.vector_index:  # on disk: the replaced kinds go
                index_files.remove_replaced(self.settings.index_dir, index.model, index.kind)
        except OSError as exc:  # derived state: keep serving from memory, say so
            log.warning("could not save the vector index: %s", exc)
            self.reason = f"index not saved: {exc}"
        self._last_save = time.monotonic()

    # ----- reindex -----------------------------------------------------------------------
    def reindex(self, job: ReindexJob) -> ReindexJob:
        """Rebuild the FTS tables and the vector index from SQLite (canonical)."""
        started = time.monotonic()
        job.state, job.phase = "running", "fts"
        try:
            conn = self.store.conn
            # In short transactions beside the live index: hook writes go on meanwhile.
            fts_rebuild.rebuild(conn, stopping=self._stopping.is_set)
            token_rows.clear(conn)  # derived too: the passes after this one make them again
            self._tokens_after, self._tokens_done, self._tokens_sweep = 0, False, time.monotonic()
            job.fts_seconds = round(time.monotonic() - started, 3)
            if self.embedder is None or self.state != "ready":
                job.vectors = f"skipped: {self.reason}"
            else:
                self._rebuild_vectors(job)
            if job.state == "running":  # not stopped midway (``_rebuild_vectors``)
                job.phase, job.state = "done", "done"
        except Exception as exc:
            log.exception("reindex failed")
            job.state, job.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            self._building = None  # stopped or failed: the part built is dropped
        job.seconds = round(time.monotonic() - started, 3)
        return job

    def _rebuild_vectors(self, job: ReindexJob) -> None:
        assert self.embedder is not None
        assert self.index is not None
        embedder, conn = self.embedder, self.store.conn
        job.phase = "vectors"
        job.total = int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])
        fresh = self._fresh_index(embedder)
        fresh_static = self.static.empty_copy() if self.static is not None else None
        # In-service embedding only: with the worker, this model embeds queries alone and
        # keeps the one thread the runtime gave it (torch's thread count is process-wide).
        setter = None if self.process is not None else getattr(embedder, "set_threads", None)
        if setter:  # a reindex is asked for: use every core, then give one back
            setter(max(background_threads() + 1, 1))
        self._building = fresh
        try:
            for ids in self._id_chunks():
                embedded, reused = self._add(fresh, embedder, ids, fresh_static)
                job.embedded += embedded
                job.reused += reused
                job.done += len(ids)
        finally:
            if setter:
                setter(background_threads())
        if self._stopping.is_set():
            # Cut short (the service is stopping): the part rebuilt so far is dropped. The
            # previous index stays in memory and on disk as it was, and so do the cache rows
            # (no prune from a partial set); swapping the part in and saving it left a
            # partial saved set until the next start healed it.
            job.state, job.vectors = "failed", "stopped: the previous index was kept"
            job.error = (
                f"the service stopped after {job.done} of {job.total} vectors; the previous "
                "index was kept: run `workbench reindex` again"
            )
            return
        job.phase = "saving"
        keep = set(fresh.hashes().values())
        # Rows written since the rebuild began (the embedding worker's) are kept: their
        # observations are behind, not gone.
        before = int(job.started_at) if self.process is not None else None
        job.pruned = _prune(conn, embedder.name, keep, before=before)
        self.index, self.static, self.switching = fresh, fresh_static, None
        self._building = None
        trim_heap()  # the old index's pages
        self.sync(full=True)  # rows added or deleted while the rebuild ran
        self._save(force=True)
        job.vectors = "rebuilt"
        if self.process is not None and self._behind:
            job.vectors = f"rebuilt; {len(self._behind)} behind (the embedding worker adds them)"
            self.process.wake()


def _prune(conn: Any, model: str, keep: set[str], before: int | None = None) -> int:
    """Drop this model's cache rows for texts no observation has (deleted memories)."""
    with atomic(conn):
        return int(
            conn.execute(
                "DELETE FROM embeddings WHERE model = ? AND text_hash NOT IN"
                " (SELECT value FROM json_each(?)) AND created_at_epoch < ?",
                (model, json.dumps(sorted(keep)), before if before is not None else 2**62),
            ).rowcount
        )


class IndexRanker:
    """``VectorRanker`` (workbench.recall.search) over an ``Indexer``'s model and index.

    Query embeddings are cached (LRU): a person paging through results, or the hybrid and
    vector modes of one comparison, embed a query once.
    """

    def __init__(self, indexer: Indexer) -> None:
        self._indexer = indexer
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        embedder = self._indexer.embedder
        return (
            "static"
            if embedder is not None and embedder.name.startswith("static")
            else ("minilm" if embedder is not None else self._indexer.settings.embedder)
        )

    def available(self) -> bool:
        return self._indexer.state == "ready" and self._indexer.index is not None

    def behind(self) -> int | None:
        """Observations search cannot find by vector yet (``vectorsBehind``)."""
        return self._indexer.behind()

    def rebuilding(self) -> tuple[int, int] | None:
        """``(done, total)`` while the index is filled from the embeddings cache at start."""
        return self._indexer.filling

    def static_held(self) -> int | None:
        """Memories the static tier holds (``vectorsStatic``); None without the tier."""
        static = self._indexer.static
        return len(static) if static is not None and static.ready else None

    @property
    def unavailable_reason(self) -> str | None:
        return None if self.available() else self._indexer.reason

    def generation(self) -> tuple[object, ...]:
        """What this ranker's lists depend on besides the query: equal tuples, equal lists.

        The indexer's state (a ranker that is not ready ranks nothing), the model, and the
        versions of MiniLM's index and the static tier's (``VectorIndex.version``: vectors
        added as the embedding worker catches up, dropped, compacted; a reindex's or a
        switch's new index). Read before a ranking, for ``recall.anchor_memo``.
        """
        indexer = self._indexer
        index, static = indexer.index, indexer.static
        tier = static.index if static is not None else None
        return (
            indexer.state,
            self.name_of_model,
            index.version if index is not None else None,
            tier.version if tier is not None else None,
        )

    def embed_query(self, query: str) -> Any:
        with self._lock:
            hit = self._cache.get(query)
            if hit is not None:
                self._cache.move_to_end(query)
                return hit
        embedder = self._indexer.embedder
        assert embedder is not None
        vector = embedder.embed([query])[0]
        with self._lock:
            self._cache[query] = vector
            while len(self._cache) > QUERY_CACHE:
                self._cache.popitem(last=False)
        return vector

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        index = self._indexer.index
        if not self.available() or index is None:
            return []
        found = index.search(self.embed_query(query), k, allowed_ids, exact=self._exact)
        return self._with_static(query, k, found, allowed_ids, None)

    def rank_in_projects(
        self, query: str, k: int, projects: Sequence[str]
    ) -> list[tuple[int, float]]:
        """``rank`` within ``projects``, from the index's slot → project array (no id list)."""
        index = self._indexer.index
        if not self.available() or index is None:
            return []
        found = index.search(self.embed_query(query), k, projects=projects, exact=self._exact)
        return self._with_static(query, k, found, None, projects)

    def _with_static(
        self,
        query: str,
        k: int,
        found: list[tuple[int, float]],
        allowed_ids: Sequence[int] | None,
        projects: Sequence[str] | None,
    ) -> list[tuple[int, float]]:
        """Merge the static tier's hits (memories MiniLM has not reached) into ``found``.

        Each memory is scored by its best available tier: a MiniLM cosine when it has one,
        else its static cosine mapped onto MiniLM's scale (the build's calibration). The
        tiers hold disjoint ids but for an instant during an upgrade; MiniLM's score wins.
        """
        static = self._indexer.static
        index = static.index if static is not None else None
        if static is None or index is None or not len(index):
            return found
        vector = self._static_query(static, query)
        more = index.search(vector, k, allowed_ids, projects=projects)
        have = {i for i, _ in found}
        merged = found + [(i, static.score(c)) for i, c in more if i not in have]
        merged.sort(key=lambda hit: (-hit[1], hit[0]))
        return merged[:k]

    def _static_query(self, static: StaticTier, query: str) -> Any:
        key = "\0static\0" + query  # one LRU for both tiers' query vectors
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        vector = static.embed_query(query)
        with self._lock:
            self._cache[key] = vector
            while len(self._cache) > QUERY_CACHE:
                self._cache.popitem(last=False)
        return vector

    def _exact(self, hashes: list[str]) -> dict[str, Any]:
        """fp32 vectors from the embeddings cache: a quantised index rescores with them."""
        embedder = self._indexer.embedder
        dim = embedder.dim if embedder is not None else None
        return vectors.cached_vectors(self._indexer.store.conn, self.name_of_model, hashes, dim)

    @property
    def name_of_model(self) -> str:
        embedder = self._indexer.embedder
        return embedder.name if embedder is not None else ""
