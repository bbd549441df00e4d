"""Replay spooled hook events through the same ingest path the routes use.

Order is capture order (filenames sort by time). Each envelope's body first crosses the same
text boundary as a request (``service.boundary.clean``: lone surrogates become U+FFFD,
private blocks go, NaN is refused), then is validated with the route's own request model.
Every refusal a request would get as a 4xx (unreadable envelope, invalid body, a domain
error, a value SQLite refuses as data) moves the file to ``rejected/``: kept for a person,
counted by ``/api/health`` and ``workbench status``, never retried. Only a passing fault (the
database is busy or locked, the disk is full) leaves it for the next round, and a 5xx-class
refusal (the store is busy or gone) ends the round there. Replay is
idempotent because every envelope carries the idempotency key its hook generated: an event
that did reach the service is a duplicate.

Capture order holds against live events too (``ReplayAhead``): before the service stores an
event a hook posted, it replays whatever waits in the spool. A hook that found the service
not up yet (a session's start has just spawned it) spools the prompt; the tool call a moment
later reaches the service; without this the tool call would be stored first, under no prompt,
and the prompt half a minute later, at the next periodic round.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field

from pydantic import ValidationError

from service.boundary import clean
from service.schemas import HOOK_BODIES
from workbench import spool
from workbench.errors import SpoolReplaying, WorkbenchError
from workbench.ingest import Ingestor
from workbench.redact import redact_value

log = logging.getLogger("workbench.replay")


@dataclass
class ReplayReport:
    replayed: int = 0
    duplicates: int = 0
    skipped: int = 0
    rejected: int = 0
    left: int = 0
    errors: list[str] = field(default_factory=list)
    # Files a passing fault of their own left for the next round (not the ones a busy store
    # or the end of the time budget left unread), and whether the budget ran out.
    faulted: list[str] = field(default_factory=list)
    out_of_time: bool = False
    paused_by: WorkbenchError | None = None  # the store's refusal that ended the round

    def to_json(self) -> dict[str, object]:
        return {
            "replayed": self.replayed,
            "duplicates": self.duplicates,
            "skipped": self.skipped,
            "rejected": self.rejected,
            "pending": self.left,
            "errors": self.errors[:20],
        }


_lock = threading.Lock()


def replay(ingestor: Ingestor, retention_days: float) -> ReplayReport:
    """Replay every pending envelope once; safe to call from several threads."""
    with _lock:
        report = _replay(ingestor)
        spool.prune(ingestor.settings.spool_dir, retention_days)
    return report


# The most a live hook event waits for the spool ahead of it: the hook's whole exchange has
# 2 s (hooks/_runtime.py TOTAL_TIMEOUT_S), and its own write still has to follow.
AHEAD_BUDGET_S = 1.0


class ReplayAhead:
    """Called before a live hook event is stored: replays the spool first (capture order).

    Nothing waits (the usual case): one directory scan, ~10 µs. Something waits: it is replayed
    now, on the hook writer's thread, under the same lock as every other round. When that takes
    longer than ``AHEAD_BUDGET_S`` (a long outage's backlog), ``SpoolReplaying`` (503): the
    hook spools its event behind the rest, and the order still holds. Files a fault of their own
    left behind are not retried on every event (the periodic round retries them), so one bad
    file cannot stall or refuse the live events behind it.
    """

    def __init__(self, ingestor: Ingestor) -> None:
        self._ingestor = ingestor
        self._faulted: frozenset[str] = frozenset()
        self.last: ReplayReport | None = None  # the last round that replayed anything

    def __call__(self) -> None:
        spool_dir = self._ingestor.settings.spool_dir
        if not set(spool.pending_names(spool_dir)) - self._faulted:
            return
        with _lock:
            report = _replay(self._ingestor, deadline=time.monotonic() + AHEAD_BUDGET_S)
            self._faulted = frozenset(report.faulted)
        if report.replayed or report.duplicates or report.rejected:
            self.last = report
        if report.paused_by is not None:  # the store is busy or gone: the live event too
            raise report.paused_by
        if report.out_of_time:
            raise SpoolReplaying(
                f"{report.left} spooled events are still being replayed ahead of this one; "
                "the hook spools it behind them and the service stores it in its turn"
            )


def _replay(ingestor: Ingestor, deadline: float | None = None) -> ReplayReport:
    """One round over the pending envelopes, oldest first; the caller holds ``_lock``."""
    report = ReplayReport()
    paths = spool.pending(ingestor.settings.spool_dir)
    for index, path in enumerate(paths):
        if deadline is not None and time.monotonic() > deadline:
            report.left += len(paths) - index
            report.out_of_time = True
            break
        cleaned = None
        try:
            envelope = spool.Envelope.from_json(path.read_text(encoding="utf-8"))
            cleaned = _cleaned(envelope)
            model = HOOK_BODIES.get(envelope.path)
            if model is None:
                raise ValueError(f"no hook route {envelope.path!r}")
            body = model.model_validate(clean(envelope.body))
        except (ValueError, ValidationError, RecursionError) as exc:
            # ValueError covers bad JSON, bad UTF-8, UnfitJson and a bad envelope.
            report.rejected += 1
            report.errors.append(f"{path.name}: {str(exc).splitlines()[0]}")
            spool.mark(path, spool.REJECTED, cleaned)
            continue
        except OSError:
            continue  # vanished under us (another replayer): nothing to do
        try:
            result = body.ingest(ingestor, envelope.event_key)
        except WorkbenchError as exc:
            if exc.status_code >= 500:  # the store cannot write now (busy, gone): later
                log.warning("replay paused, will retry: %s", exc.message)
                report.left += len(paths) - index
                report.paused_by = exc
                break
            report.rejected += 1
            report.errors.append(f"{path.name}: {exc.message}")
            spool.mark(path, spool.REJECTED, cleaned)
            continue
        except (sqlite3.IntegrityError, sqlite3.DataError, OverflowError, ValueError) as exc:
            # Trigger: SQLite (or a conversion) refused a value of this event. / Why: the
            # same bytes are refused the same way every round. / Outcome: rejected now.
            report.rejected += 1
            report.errors.append(f"{path.name}: {type(exc).__name__}: {exc}")
            spool.mark(path, spool.REJECTED, cleaned)
            continue
        except Exception as exc:  # a passing fault: keep the file for the next round
            log.warning("replay of %s failed, will retry: %s", path.name, exc)
            report.left += 1
            report.faulted.append(path.name)
            continue
        if result.status == "duplicate":
            report.duplicates += 1
        elif result.status == "skipped":
            report.skipped += 1
        else:
            report.replayed += 1
        spool.mark(path, spool.PROCESSED, cleaned)
    return report


def _cleaned(envelope: spool.Envelope) -> spool.Envelope | None:
    """The envelope as it may be kept (private blocks and lone surrogates gone), or None when
    it is already clean and can simply be moved."""
    body = redact_value(envelope.body, surrogates=True)
    if body == envelope.body:
        return None
    return spool.Envelope(
        envelope.event_key,
        envelope.path,
        body,
        hook=envelope.hook,
        spooled_at_ns=envelope.spooled_at_ns,
        reason=envelope.reason,
    )
