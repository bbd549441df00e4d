"""Publishing from the service when a session ends (``team_publish_on_stop``).

Why in the service and not the hook: a hook must stay stdlib-only and return in milliseconds,
and a publish loads DuckDB, talks to PostgreSQL and writes Parquet (seconds). The hooks only
post their events, as always; ``service/runtime.py`` tells this publisher what the service
stored, and one background thread runs the publishes.

When a run happens:

- **Session end** (``session_ended``): the SessionEnd hook marked a session of an allowlisted
  project completed. The run waits until that session's queued events (its last Stop's
  summary is usually still in the queue) are stored, then publishes once, for the session.
- **Idle safety net** (``summary_stored``): not every session ends cleanly. Codex CLI sends no
  SessionEnd at all, a terminal can be killed, a laptop closed. So each stored summary also
  (re)arms a timer: once ``team_publish_idle_s`` seconds pass with no new summary, a run
  publishes what is there. Why an idle delay rather than a publish at the next service start:
  the service may run for days with the sessions that never ended, and a publish at start
  would add a lake round trip to every start (and a startup failure mode) to cover the rarer
  case; anything a dead service left unpublished goes with the next run anyway, since
  publishing is incremental from the lake's high-water marks. ``team_publish_idle_s = 0``
  publishes after every summary (this setting's earlier behaviour).
- ``request()``: a run now (tests, callers that know better).

Runs never overlap (one thread) and never pile up: whatever asks for a run while one is under
way collapses into one follow-up run, which picks up everything added meanwhile. A failure
(lake down, conflict after retries) is logged and stored in ``team_publish.json``
(``workbench/team/last_publish.py``), which ``workbench team status`` shows; the next trigger
tries again. Nothing is lost: publishing is incremental.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.store import connection

if TYPE_CHECKING:
    from workbench.settings import Settings

log = logging.getLogger("workbench.team")

TRIGGER = "stop hook"  # the idle safety net after a Stop hook's summary, and request()
SESSION_END = "session end"
# Which of the ended sessions still have queued work: ``pending(ids) -> ids still waiting``.
PendingCheck = Callable[[set[str]], set[str]]


class AutoPublisher(threading.Thread):
    def __init__(self, settings: Settings, pending: PendingCheck | None = None) -> None:
        super().__init__(name="workbench-team-publisher", daemon=True)
        self.settings = settings
        self._pending = pending or self._queued_sessions
        self._cond = threading.Condition()
        self._stopping = False
        self._due: float | None = None  # monotonic time of an asked-for run (request)
        self._idle_due: float | None = None  # the idle safety net's deadline (summary_stored)
        self._ended: set[str] = set()  # ended sessions whose queued work is not stored yet
        self._recheck = False  # the queue moved (or a session ended): look at _ended again
        self._idle = threading.Event()  # no run under way, due, or awaited
        self.runs = 0

    def wants(self, project: str | None) -> bool:
        """Whether an event of ``project`` should lead to a publish (it is on the allowlist)."""
        return project is not None and project in self.settings.team_projects

    def request(self) -> None:
        """Ask for a run now; returns at once (state under a lock, no work on the caller)."""
        with self._cond:
            self._due = time.monotonic()
            self._wake()

    def summary_stored(self) -> None:
        """A summary was stored: publish after ``team_publish_idle_s`` with no newer one."""
        with self._cond:
            # A later summary moves the deadline back: a busy session publishes when it pauses.
            self._idle_due = time.monotonic() + self.settings.team_publish_idle_s
            self._wake()

    def session_ended(self, content_session_id: str) -> None:
        """A session ended: publish once its queued events are stored."""
        with self._cond:
            self._ended.add(content_session_id)
            self._recheck = True
            # Should its queued work never be stored (a failed event), the idle net publishes.
            if self._idle_due is None:
                self._idle_due = time.monotonic() + self.settings.team_publish_idle_s
            self._wake()

    def queue_moved(self) -> None:
        """The worker stored something: an ended session may have no queued work left."""
        with self._cond:
            if self._ended:
                self._recheck = True
                self._cond.notify_all()

    def _wake(self) -> None:
        self._idle.clear()
        self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no run is under way, due or awaited (shutdown, tests); False on timeout."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        while (trigger := self._next_run()) is not None:
            self.publish_once(trigger)

    def _next_run(self) -> str | None:
        """Block until a run is due; its trigger, or None when stopping."""
        with self._cond:
            while not self._stopping:
                trigger = self._ready_trigger()
                if trigger is not None:
                    # This run covers whatever was asked so far, the idle net's rows included.
                    self._due = self._idle_due = None
                    return trigger
                deadlines = [d for d in (self._due, self._idle_due) if d is not None]
                if not deadlines and not self._ended:
                    self._idle.set()
                wait = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                self._cond.wait(wait)
            return None

    def _ready_trigger(self) -> str | None:
        if self._ended and self._recheck:
            self._recheck = False
            try:
                waiting = self._pending(set(self._ended))
            except sqlite3.Error as exc:  # the store is busy or gone: publish what is there
                log.warning("could not read the queue before a session-end publish: %s", exc)
                waiting = set()
            finished = self._ended - waiting
            self._ended = waiting & self._ended
            if finished:
                return SESSION_END
        now = time.monotonic()
        if any(d is not None and now >= d for d in (self._due, self._idle_due)):
            return TRIGGER
        return None

    def _queued_sessions(self, session_ids: set[str]) -> set[str]:
        """The sessions in ``session_ids`` with events still queued (pending or claimed)."""
        conn = connection.connect(self.settings.db_path, readonly=True)
        try:
            marks = ",".join("?" * len(session_ids))
            rows = conn.execute(
                "SELECT DISTINCT e.content_session_id FROM queue AS q JOIN events AS e"
                " ON e.id = q.event_id WHERE q.status IN ('pending', 'claimed')"
                f" AND e.content_session_id IN ({marks})",
                sorted(session_ids),
            ).fetchall()
        finally:
            conn.close()
        return {r[0] for r in rows}

    def publish_once(self, trigger: str = TRIGGER) -> None:
        """One publishing run, its outcome recorded; never raises (the thread must live on)."""
        from workbench.settings import load_settings
        from workbench.team import last_publish
        from workbench.team.publish import publish

        try:
            # Trigger: every run. / Why: `team deny P` / `team allow P` only write
            # settings.json, and the service must not go on publishing a project the user
            # has just taken off the allowlist. / Outcome: the file is read afresh; while it
            # is unreadable, `capture_paused` makes publish refuse (fail closed).
            result = publish(load_settings(self.settings.data_dir))
        except Exception as exc:  # noqa: BLE001 - recorded and shown by `team status`
            message = str(exc).strip() or type(exc).__name__
            log.warning("team publish (%s) failed: %s", trigger, message)
            try:
                last_publish.record(self.settings, trigger, error=message)
            except OSError:
                log.exception("could not record the failed team publish")
        else:
            last_publish.record(self.settings, trigger, result=result)
            log.info(
                "team publish (%s): %s rows, snapshot %s",
                trigger,
                sum(result.added.values()),
                result.snapshot,
            )
        finally:
            self.runs += 1
