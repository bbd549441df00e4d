"""The work queue and the spool: ``/api/spool/replay``, ``/api/queue/*``, ``/api/recompress``."""

from __future__ import annotations

from typing import Any

from workbench.api_models.base import CamelModel


class SpoolReplay(CamelModel):
    """What one pass over the spool did (``service.replay.ReplayReport``)."""

    replayed: int
    duplicates: int
    skipped: int
    rejected: int
    pending: int
    errors: list[str]


class FailedEvent(CamelModel):
    """An event parked after its last attempt failed, and why."""

    event_id: int
    kind: str
    content_session_id: str | None
    project: str | None
    attempts: int
    reason: str | None
    failed_at: str | None


class FailedEvents(CamelModel):
    items: list[FailedEvent]
    count: int


class Requeued(CamelModel):
    requeued: int


class Recompressed(CamelModel):
    """``workbench.derive.RecompressReport`` and the compressor that ran."""

    compressor: str
    events: int
    observations_before: int
    observations_after: int
    added: int
    removed: int
    unchanged: int
    summaries: int
    failed: list[dict[str, Any]]  # events that could not be re-derived, with why
