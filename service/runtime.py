"""What the service owns while it runs, started and stopped by the app's lifespan.

Start order matters: take the PID lock (one service per data dir; ``python -m service``
takes it itself before uvicorn starts and hands it over) → open and migrate the
store → re-queue work a crashed process had claimed → start the worker → replay the spool →
start the periodic replayer. Stop runs it backwards and releases the lock last.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.bus import Bus
from service.replay import ReplayAhead, ReplayReport, replay
from service.worker import Worker
from workbench.compress.base import build_compressor
from workbench.derive import Derived
from workbench.folder_memory import plan
from workbench.folder_memory.apply import AutoRunner, forget_rows, summary_root
from workbench.forget import ForgetReport, forget
from workbench.ingest import Ingestor
from workbench.knowledge import forget_copies
from workbench.knowledge.agent import KnowledgeAgent
from workbench.knowledge.report_process import ReportProcess
from workbench.pidfile import PidFile
from workbench.recall.anchor_memo import AnchorMemo
from workbench.recall.embed import load_embedder
from workbench.recall.indexer import Indexer, IndexRanker
from workbench.settings import Settings
from workbench.store import duck, events
from workbench.store.database import Store
from workbench.store.events import EventRow
from workbench.team.autopublish import AutoPublisher
from workbench.transcripts.watch import TranscriptWatcher

log = logging.getLogger("workbench.service")
# After a hook was told to spool: the first replay round this long after, then twice as long
# each time the store still refuses, up to the last (``Runtime.replay_soon``).
REPLAY_SOON_S = 1.0
REPLAY_SOON_MAX_S = 8.0


@dataclass
class Runtime:
    settings: Settings
    store: Store
    ingestor: Ingestor
    worker: Worker
    pidfile: PidFile | None
    bus: Bus = field(default_factory=Bus)
    started_at: float = field(default_factory=time.time)
    requeued_at_start: int = 0
    # When a hook write last gave up waiting for the write lock (epoch s; 0 = never).
    store_busy_at: float = 0.0
    # Why the last hook write failed on the store itself (disk full, I/O error), until a
    # hook write gets through again: health says "not storing" meanwhile.
    store_fault: str | None = None
    last_replay: ReplayReport | None = None
    # Replays the spool ahead of each live hook event (capture order; service/replay.py).
    replay_ahead: ReplayAhead = field(init=False)
    _stop: threading.Event = field(default_factory=threading.Event)
    # Set when a hook was told to spool (a 503): the replayer runs soon (``replay_soon``).
    _replay_soon: threading.Event = field(default_factory=threading.Event)
    _replayer: threading.Thread | None = None
    _last_status: float = 0.0
    # The background embedding pipeline (workbench/recall/indexer.py); it owns the model.
    indexer: Indexer | None = None
    # Recent rankings' first observation: the timeline by query after its search reuses it
    # (workbench/recall/anchor_memo.py); GET /api/index/status shows its counts.
    anchors: AnchorMemo = field(default_factory=AnchorMemo)
    # Publishes to the team lake when a session ends (``team_publish_on_stop``).
    team_publisher: AutoPublisher | None = None
    # Refreshes folder memory files after each summary (``folder_memory_files``, issue 22).
    folder_memory: AutoRunner | None = None
    # The hook routes' writes run here, off the event loop (service/routes/sessions.py). A
    # few threads, not one: a write stalled on a lock must not queue every other hook
    # behind it; not many: they all take turns on the one write lock anyway.
    hook_writers: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(4, thread_name_prefix="workbench-hook-writer")
    )

    # Tails the agents' own transcripts when ``transcript_watch`` is on (i22-transcripts).
    transcript_watcher: TranscriptWatcher | None = None

    # The analytics child (``/api/stats/<report>``): DuckDB never opens the store in here.
    reports: ReportProcess | None = None

    # The corpus routes' knowledge agent (it caches the Anthropic client), made on first use.
    _knowledge_agent: KnowledgeAgent | None = None
    _agent_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.replay_ahead = ReplayAhead(self.ingestor)

    @classmethod
    def start(cls, settings: Settings, *, pid_lock: bool | PidFile = True) -> Runtime:
        """Start everything; ``pid_lock`` is True (take it), False (none), or a held lock.

        A held lock is released by ``stop()``, inside the lifespan: uvicorn re-raises SIGTERM
        once it has shut down, so code after ``uvicorn.run`` may never run.
        """
        settings.ensure_dirs()
        if isinstance(pid_lock, PidFile):
            pidfile: PidFile | None = pid_lock
        else:
            pidfile = PidFile(settings.pid_path) if pid_lock else None
        if pidfile and not pidfile.held:
            pidfile.acquire(port=settings.port)
        try:
            store = Store(settings.db_path)
            requeued = events.requeue_claimed(store.conn)
            bus = Bus()
            worker = Worker(store, settings, lambda: build_compressor(settings))
            ingestor = Ingestor(store, settings, notify=worker.notify, listener=bus.publish)
        except BaseException:
            if pidfile:
                pidfile.release()
            raise
        runtime = cls(
            settings, store, ingestor, worker, pidfile, bus=bus, requeued_at_start=requeued
        )
        worker.listeners.append(runtime._publish_derived)
        # By construction: this process writes the store with Python's sqlite3, so DuckDB's
        # SQLite may only open it from the analytics child (knowledge/report_worker.py).
        duck.refuse_in_this_process(settings.db_path)
        runtime.reports = ReportProcess(settings.db_path)
        # Embedding happens after the commit, on the indexer's thread: the worker only wakes it.
        # Documents are embedded by a child process (workbench/recall/embed_worker.py); the
        # service keeps a one-thread copy of the model for query embeddings only.
        runtime.indexer = Indexer(
            store,
            settings,
            functools.partial(load_embedder, threads=1),
            ingest_busy=worker.ingest_busy,
            embed_process=True,
        )
        worker.listeners.append(runtime.indexer.notify)
        if settings.team_publish_on_stop and settings.team_catalog and settings.team_data:
            runtime.team_publisher = AutoPublisher(settings)
            worker.listeners.append(runtime._publish_to_team)
            ingestor.listener = runtime._ingested
        if settings.folder_memory_files:
            runtime.folder_memory = AutoRunner(
                settings.db_path,
                settings.folder_memory_filename,
                settings.folder_memory_observations,
                settings.folder_memory_exclude,
            )
            worker.listeners.append(runtime._refresh_folder_memory)
        if requeued:
            log.info("re-queued %d events claimed by a previous process", requeued)
        worker.start()
        runtime.indexer.start()
        if runtime.team_publisher is not None:
            runtime.team_publisher.start()
        runtime.replay_spool()
        runtime._replayer = threading.Thread(
            target=runtime._replay_loop, name="workbench-replayer", daemon=True
        )
        runtime._replayer.start()
        if settings.transcript_watch:
            runtime.transcript_watcher = TranscriptWatcher(ingestor)
            runtime.transcript_watcher.start()
        return runtime

    def _publish_derived(self, event: EventRow, derived: Derived) -> None:
        """Tell live clients what the worker just stored (runs on the worker thread)."""
        for obs_id in derived.created_ids:
            self.bus.publish(
                "new_observation", {"id": obs_id, "project": event.project, "eventId": event.id}
            )
        if derived.summary_id is not None:
            self.bus.publish(
                "new_summary",
                {
                    "id": derived.summary_id,
                    "project": event.project,
                    "contentSessionId": event.content_session_id,
                },
            )
        # Throttled to one update per 200 ms, except that "drained" is always sent: a page
        # must never be left showing a backlog that is gone.
        now = time.monotonic()
        queue = events.backlog(self.store.conn)
        if now - self._last_status >= 0.2 or queue["pending"] + queue["claimed"] == 0:
            self._last_status = now
            self.bus.publish("processing_status", {"queue": queue})

    def _publish_to_team(self, event: EventRow, derived: Derived) -> None:
        """Tell the team publisher what the worker stored (runs on the worker thread).

        Every stored event may be the last queued one of a session that has ended; a summary
        of an allowlisted project also arms the idle safety net (workbench/team/autopublish.py).
        """
        publisher = self.team_publisher
        if publisher is None:
            return
        publisher.queue_moved()
        if derived.summary_id is not None and publisher.wants(event.project):
            publisher.summary_stored()

    def _refresh_folder_memory(self, event: EventRow, derived: Derived) -> None:
        """After a stored summary, queue its project's folder memory files (worker thread:
        only a lookup here; the files are written on the runner's own thread)."""
        runner = self.folder_memory
        if runner is None or derived.summary_id is None:
            return
        root = summary_root(self.store.conn, event.content_session_id)
        if root is not None:
            runner.request(root)

    def _ingested(self, kind: str, data: dict[str, Any]) -> None:
        """The ingestor's listener when publishing is on: the bus, then session ends."""
        self.bus.publish(kind, data)
        publisher = self.team_publisher
        if (
            kind == "session_completed"
            and publisher is not None
            and publisher.wants(data.get("project"))
        ):
            publisher.session_ended(str(data["contentSessionId"]))

    def replay_spool(self) -> ReplayReport:
        self.last_replay = replay(self.ingestor, self.settings.spool_retention_days)
        return self.last_replay

    def replay_soon(self) -> None:
        """A hook was just refused with a 503 and is spooling its event: replay soon.

        Why: replay-ahead stores a spooled event before its session's next live one, but a
        session's last events (its Stop) have no next one, and the periodic round comes every
        ``spool_replay_interval_s`` (30 s). Outcome: a round ``REPLAY_SOON_S`` later (the hook
        writes its file meanwhile), and again, twice as late each time up to
        ``REPLAY_SOON_MAX_S``, while the store keeps refusing (a file failing on its own is
        left to the periodic round)."""
        self._replay_soon.set()

    def _replay_loop(self) -> None:
        pause = REPLAY_SOON_S
        while True:
            soon = self._replay_soon.wait(self.settings.spool_replay_interval_s)
            if self._stop.is_set():
                return
            if soon:
                self._replay_soon.clear()
                if self._stop.wait(min(pause, self.settings.spool_replay_interval_s)):
                    return
            try:
                report: ReplayReport | None = self.replay_spool()
            except Exception:
                log.exception("spool replay failed")
                report = None
            if soon and report is not None and report.paused_by is not None:
                pause = min(pause * 2, REPLAY_SOON_MAX_S)  # the store still refuses: again
                self._replay_soon.set()
            else:
                pause = REPLAY_SOON_S

    def stop(self) -> None:
        self._stop.set()
        self._replay_soon.set()  # wakes the replayer to see the stop
        if self.transcript_watcher is not None:
            self.transcript_watcher.stop()
        self.hook_writers.shutdown(wait=True)  # requests have ended: nothing new arrives
        # Wait out one model call at most; the claimed event is re-queued at the next start.
        self.worker.stop(timeout=self.settings.llm_timeout_s + 5)
        if self._replayer is not None:
            self._replayer.join(5)
        if self.indexer is not None:
            self.indexer.stop(timeout=10)  # saves the vector index
        if self.reports is not None:
            self.reports.close()
        if self.folder_memory is not None:
            self.folder_memory.stop()
        if self.team_publisher is not None:
            self.team_publisher.stop(timeout=30)  # a run under way finishes (one snapshot)
        if self.worker.is_alive() or (self.indexer is not None and self.indexer.is_alive()):
            log.warning("worker still busy at shutdown; leaving the store to the OS")
        else:
            self.store.close()
        duck.allow_in_this_process(self.settings.db_path)
        if self.pidfile:
            self.pidfile.release()

    def forget(self, ids: list[int]) -> ForgetReport:
        """Forget observations for good (``workbench.forget``: their cached embeddings go
        before its purge), then wake the indexer (its next pass drops and zeroes their vectors
        in the index and saves it) and tell live pages."""
        missed: list[str] = []
        try:
            roots = self._folder_roots(ids)
        except Exception as exc:  # an optional clean-up never stands in the forget's way
            log.warning("could not look up the folder memory files of %s: %s", ids, exc)
            roots, missed = {}, [f"(not looked up: {exc})"]
        report = forget(self.store.conn, self.settings.spool_dir, ids)
        if report.deleted:
            forget_copies.record(report, self.settings)
            self._forget_in_folder_memory(roots, {d.id for d in report.deleted}, report, missed)
        if report.deleted and self.indexer is not None:
            self.indexer.notify()
        for gone in report.deleted:
            self.bus.publish("observation_deleted", {"id": gone.id, "project": gone.project})
        publisher = self.team_publisher
        if publisher is not None and any(publisher.wants(d.project) for d in report.deleted):
            # A forgotten row may be published: its tombstone should not wait for a session end.
            publisher.request()
        return report

    def _folder_roots(self, ids: list[int]) -> dict[Path, set[Path]]:
        """The checkouts whose folder memory files may list ``ids`` (their sessions' roots),
        each with the folders of those files (``plan.folders_listing``), read before the
        forget deletes the rows."""
        if not ids:
            return {}
        conn = self.store.conn
        sessions = [
            str(r[0])
            for r in conn.execute(
                "SELECT DISTINCT content_session_id FROM observations"
                " WHERE id IN (SELECT value FROM json_each(?)) AND content_session_id IS NOT NULL",
                (json.dumps(sorted(set(ids))),),
            )
        ]
        roots = {summary_root(conn, session) for session in sessions}
        found = {root: plan.folders_listing(conn, root, ids) for root in roots if root}
        return {root: folders for root, folders in sorted(found.items()) if folders}

    def _forget_in_folder_memory(
        self,
        roots: dict[Path, set[Path]],
        ids: set[int],
        report: ForgetReport,
        failed: list[str],
    ) -> None:
        """Take ``ids`` out of the folder memory files of ``roots`` now. Why: they list
        observations by id and title in the user's checkout, and Claude Code reads them into
        every session; the project's next summary could be days away. ``failed``: what could
        not be done already (reported as not cleaned)."""
        runner = self.folder_memory
        done: list[str] = []
        for root, folders in roots.items():
            try:
                if runner is not None:
                    items = runner.forget(root, ids, folders)
                else:  # off now, but a file written while it was on lists them too
                    filename = self.settings.folder_memory_filename
                    items = forget_rows(self.settings.db_path, root, filename, ids, folders)
                done += [str(i.file) for i in items if i.action in ("update", "strip", "delete")]
                failed += [f"{i.file} ({i.reason})" for i in items if i.action == "skip"]
            except Exception as exc:  # a folder file must never fail the forget itself
                log.warning("folder memory run after a forget failed for %s: %s", root, exc)
                failed.append(f"{root} ({exc})")
        report.tally(
            "folder memory files",
            done,
            failed,
            "remove the listed rows by hand, or `workbench folder-memory clean` in the checkout"
            " (it removes every section; generate writes them again)",
        )

    def vectors_after_forget(self) -> str:
        """``removing`` while a ready indexer will drop the vectors on its next pass, else
        ``none`` (no vector index holds them)."""
        ready = self.indexer is not None and self.indexer.state == "ready"
        return "removing" if ready else "none"

    def knowledge_agent(self) -> KnowledgeAgent:
        """The one ``KnowledgeAgent`` of this runtime, over its store and vector ranker."""
        with self._agent_lock:
            if self._knowledge_agent is None:
                self._knowledge_agent = KnowledgeAgent(
                    self.settings, store_or_conn=self.store, ranker=self.vector_ranker
                )
            return self._knowledge_agent

    @property
    def vector_ranker(self) -> IndexRanker | None:
        """The ``VectorRanker`` search uses (its ``available()`` is False until ready)."""
        return self.indexer.ranker if self.indexer is not None else None

    @property
    def uptime_s(self) -> float:
        return time.time() - self.started_at
