"""Publishing from the service after a Stop hook's summary is stored (``team_publish_on_stop``).

Why in the service and not the hook: a hook must stay stdlib-only and return in milliseconds,
and a publish loads DuckDB, talks to PostgreSQL and writes Parquet (seconds). The Stop hook
only posts its summary, as always; once the worker has stored that summary
(``service/runtime.py`` listens to the worker), ``AutoPublisher.request`` sets a flag and
returns. One background thread runs the publishes:

- never two at once (one thread), and never a pile-up: requests that arrive while a run is
  under way collapse into one follow-up run, which picks up everything they added;
- a failure (lake down, conflict after retries) is logged and stored in
  ``team_publish.json`` (``workbench/team/last_publish.py``), which ``workbench team status``
  shows; the next summary tries again. Nothing is lost: publishing is incremental from the
  lake's high-water marks.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.settings import Settings

log = logging.getLogger("workbench.team")

TRIGGER = "stop hook"


class AutoPublisher(threading.Thread):
    def __init__(self, settings: Settings) -> None:
        super().__init__(name="workbench-team-publisher", daemon=True)
        self.settings = settings
        self._wanted = threading.Event()
        self._stopping = threading.Event()
        self._idle = threading.Event()  # no run under way and none asked for
        self._lock = threading.Lock()
        self.runs = 0

    def wants(self, project: str | None) -> bool:
        """Whether a summary of ``project`` should trigger a publish (it is on the allowlist)."""
        return project is not None and project in self.settings.team_projects

    def request(self) -> None:
        """Ask for a publish soon; returns at once (a flag, no work on the caller's thread)."""
        with self._lock:
            self._idle.clear()
            self._wanted.set()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no run is under way or asked for (shutdown, tests); False on timeout."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._wanted.set()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        while True:
            with self._lock:
                if not self._wanted.is_set():
                    self._idle.set()
            self._wanted.wait()
            if self._stopping.is_set():
                return
            self._wanted.clear()  # requests from now on ask for one more run after this one
            self.publish_once()

    def publish_once(self) -> None:
        """One publishing run, its outcome recorded; never raises (the thread must live on)."""
        from workbench.team import last_publish
        from workbench.team.publish import publish

        try:
            result = publish(self.settings)
        except Exception as exc:  # noqa: BLE001 - recorded and shown by `team status`
            message = str(exc).strip() or type(exc).__name__
            log.warning("team publish after a session's summary failed: %s", message)
            try:
                last_publish.record(self.settings, TRIGGER, error=message)
            except OSError:
                log.exception("could not record the failed team publish")
        else:
            last_publish.record(self.settings, TRIGGER, result=result)
            log.info(
                "team publish: %s rows, snapshot %s", sum(result.added.values()), result.snapshot
            )
        finally:
            self.runs += 1
