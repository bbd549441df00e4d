"""The service's side of the analytics child (``report_worker``): start, ask, restart, end.

The service writes the store with Python's sqlite3 and must never open it through a second
SQLite library (``report_worker`` says why), so ``/api/stats/<report>`` asks this one
long-lived child instead: started on the first report (importing duckdb and polars and
loading the extension cost about a second, paid once), one request at a time (reports take
milliseconds; the lock keeps the pipe's lines paired), and replaced after it dies or overruns
``timeout_s`` (a wedged child is killed, never waited on forever). A request whose child died
is sent once more to a fresh one; a second death, or an overrun, is a 503
``ANALYTICS_UNAVAILABLE`` that says so, and the next request starts a fresh child.

The child reads stdin and exits at EOF, and asks to be killed with its parent, so a
``kill -9`` of the service cannot leave it behind; ``close`` ends it at shutdown.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from workbench.errors import WorkbenchError
from workbench.knowledge.stats import Scope

TIMEOUT_S = 60.0


class AnalyticsUnavailable(WorkbenchError):
    """The analytics child died or overran; the next request starts a new one."""

    status_code = 503
    code = "ANALYTICS_UNAVAILABLE"


class ReportFailed(WorkbenchError):
    """An error the child reported, with the status and code it was raised with."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any]) -> None:
        super().__init__(message, **details)
        self.status_code = status
        self.code = code


class ReportProcess:
    """One analytics child for the store at ``db_path``."""

    def __init__(self, db_path: Path, *, timeout_s: float = TIMEOUT_S) -> None:
        self.db_path = db_path
        self.timeout_s = timeout_s
        self.proc: subprocess.Popen[str] | None = None
        self.restarts = 0
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False

    def report(self, kind: str, scope: Scope, **options: Any) -> dict[str, Any]:
        """The report's JSON (``{"items": …, "summary": …}``), computed by the child.

        A child that dies on the request is replaced and the request sent once more (it may
        have died before reading it: killed between two reports); a second death is a 503.
        """
        line = json.dumps({"kind": kind, "scope": asdict(scope), **options}) + "\n"
        with self._lock:
            reply = self._ask(kind, line)
            if reply is None:
                reply = self._ask(kind, line)
            if reply is None:
                code = self.proc.returncode if self.proc is not None else None
                raise AnalyticsUnavailable(
                    f"the analytics process exited (code {code}) while computing {kind!r}; "
                    "the next request starts a new one. The service log says why"
                )
        answer = json.loads(reply)
        if "ok" in answer:
            result: dict[str, Any] = answer["ok"]
            return result
        error = answer["error"]
        raise ReportFailed(
            int(error["status"]), str(error["code"]), str(error["message"]), error["details"]
        )

    def _ask(self, kind: str, line: str) -> str | None:
        """One request to a running child: its reply line, or None when it died."""
        if self._closed:
            raise AnalyticsUnavailable("the service is shutting down; retry once it is up")
        proc = self._running()
        try:
            assert proc.stdin is not None
            proc.stdin.write(line)
            proc.stdin.flush()
            reply = self._lines.get(timeout=self.timeout_s)
        except (OSError, ValueError):
            reply = None
        except queue.Empty:
            self._end(proc)
            raise AnalyticsUnavailable(
                f"the analytics report {kind!r} took longer than {self.timeout_s:g} s; its "
                "process was stopped. Narrow it (project, since/until, limit) and retry"
            ) from None
        if reply is None:
            self._end(proc)
        return reply

    def close(self) -> None:
        """End the child (EOF, then terminate, then kill); no report runs after this."""
        with self._lock:
            self._closed = True
            if self.proc is not None:
                self._end(self.proc)

    def health(self) -> dict[str, Any]:
        proc = self.proc
        alive = proc is not None and proc.poll() is None
        return {"pid": proc.pid if alive and proc else None, "restarts": self.restarts}

    # ----- the child (under the lock) ------------------------------------------------------
    def _running(self) -> subprocess.Popen[str]:
        if self.proc is not None and self.proc.poll() is None:
            return self.proc
        if self.proc is not None:
            self.restarts += 1
        self._lines = queue.Queue()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "workbench.knowledge.report_worker",
                "--db",
                str(self.db_path),
                "--parent-pid",
                str(os.getpid()),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # the service's log
            env={**os.environ, "PYTHONPATH": _import_root(os.environ.get("PYTHONPATH"))},
            text=True,
            bufsize=1,
        )
        threading.Thread(
            target=_pump,
            args=(self.proc.stdout, self._lines),
            name="workbench-report-reader",
            daemon=True,
        ).start()
        return self.proc

    def _end(self, proc: subprocess.Popen[str]) -> int | None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        for stop in (None, proc.terminate, proc.kill):
            if stop is not None:
                stop()
            try:
                return proc.wait(2.0)
            except subprocess.TimeoutExpired:
                continue
        return proc.poll()


def _pump(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
    """Hand the child's lines to the requester; None at EOF (the child exited)."""
    if stream is not None:
        for line in stream:
            lines.put(line)
    lines.put(None)


def _import_root(existing: str | None) -> str:
    """``PYTHONPATH`` with the folder this ``workbench`` package was imported from first, so
    the child runs this same code whatever its working directory."""
    root = str(Path(__file__).resolve().parent.parent.parent)
    return os.pathsep.join([root, *([existing] if existing else [])])
