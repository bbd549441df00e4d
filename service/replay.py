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
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass, field

from pydantic import ValidationError

from service.boundary import clean
from service.schemas import HOOK_BODIES
from workbench import spool
from workbench.errors import WorkbenchError
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
    report = ReplayReport()
    spool_dir = ingestor.settings.spool_dir
    with _lock:
        for path in spool.pending(spool_dir):
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
                    report.left += 1
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
                continue
            if result.status == "duplicate":
                report.duplicates += 1
            elif result.status == "skipped":
                report.skipped += 1
            else:
                report.replayed += 1
            spool.mark(path, spool.PROCESSED, cleaned)
        spool.prune(spool_dir, retention_days)
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
