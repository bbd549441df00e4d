"""The service's transcript watcher: every few seconds, what is new in each transcript.

Off by default (``transcript_watch``): hooks are how sessions reach the memory; the watcher is
for agents or sessions without them (an agent whose hooks are not installed or not trusted).
Each round expands the globs (``transcript_globs``, else ``paths.default_globs``) and reads
each file from its saved offset (``importer.import_file``) up to the first line younger than
``transcript_watch_settle_s``. By then a hook has delivered what it will of that line (a
prompt's UserPromptSubmit runs before the agent writes the prompt down), so the rule "a
session the hooks delivered is left to them" sees the hook's events first.

The first round reads the history as ``workbench import-transcripts`` would, unless
``transcript_watch_history`` is off: then a file last written before the service started is
followed from its end (claude-mem's ``startAtEnd``). A file whose size and mtime did not
change since the last round, and quiet, is not opened again.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from workbench.ingest import Ingestor
from workbench.transcripts import offsets
from workbench.transcripts.importer import QUIET_S, import_file
from workbench.transcripts.paths import default_globs, expand

log = logging.getLogger("workbench.transcripts")


class TranscriptWatcher:
    """A daemon thread polling the transcript files; ``stop()`` ends it."""

    def __init__(self, ingestor: Ingestor) -> None:
        self.ingestor = ingestor
        self.settings = ingestor.settings
        self._stop = threading.Event()
        self._seen: dict[str, tuple[int, int, float]] = {}  # path -> (inode, size, mtime)
        self._thread = threading.Thread(
            target=self._loop, name="workbench-transcripts", daemon=True
        )
        self.rounds = 0
        self.imported = 0
        self.started_at = time.time()

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.round()
            except Exception:  # a store fault: logged, the next round tries again
                log.exception("transcript watch round failed")
            self._stop.wait(self.settings.transcript_watch_interval_s)

    def round(self) -> int:
        """One pass over every transcript file; returns the events imported."""
        imported = 0
        for path in expand(self.settings.transcript_globs or default_globs()):
            if self._stop.is_set():
                break
            try:
                stat = os.stat(path)
            except OSError:
                self._seen.pop(str(path), None)
                continue
            identity = (stat.st_ino, stat.st_size, stat.st_mtime)
            if self._seen.get(str(path)) == identity:
                continue
            # History off: a file last written before the watcher started is followed from its
            # end; its earlier lines are left to ``workbench import-transcripts``.
            fresh = offsets.load(self.ingestor.store.conn, str(path)) is None
            old = stat.st_mtime < self.started_at
            skip_history = fresh and old and not self.settings.transcript_watch_history
            report = import_file(
                self.ingestor,
                path,
                self.settings.transcript_max_line_bytes,
                store=not skip_history,
                settle_ms=int(self.settings.transcript_watch_settle_s * 1000),
            )
            imported += report.imported
            # Not opened again until it changes, once it is quiet (its open turn was ended).
            quiet = time.time() - stat.st_mtime >= QUIET_S
            if quiet and not report.errors and not report.pending_bytes:
                self._seen[str(path)] = identity
        self.rounds += 1
        self.imported += imported
        return imported
