"""``GET /api/stats`` (the store overview) and the DuckDB reports under ``/api/stats/*``."""

from __future__ import annotations

from typing import Any

from workbench.api_models.base import CamelModel
from workbench.api_models.queue import FailedEvent


class PlatformCounts(CamelModel):
    sessions: int
    observations: int


class WorkerState(CamelModel):
    processed: int
    last_error: str | None
    compressor: str


class StoreOverview(CamelModel):
    totals: dict[str, int]
    types: dict[str, int]
    platforms: dict[str, PlatformCounts]
    queue: dict[str, int]
    failed: list[FailedEvent]
    db_size_bytes: int
    worker: WorkerState
    spool: dict[str, int]
    uptime_seconds: float


class Report(CamelModel):
    """One report: its rows (columns depend on the report and ``by``), and totals when it
    has them (absent otherwise: the routes serialise with ``response_model_exclude_unset``)."""

    items: list[dict[str, Any]]
    summary: dict[str, Any] | None = None
