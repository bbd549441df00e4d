"""What the hook routes and ``POST /api/memory/save`` answer (``workbench.ingest.IngestResult``).

Keys other than ``status`` appear only when they have a value: the routes serialise with
``response_model_exclude_unset``, so the wire is the same as ``IngestResult.to_json``.
"""

from __future__ import annotations

from typing import Literal

from workbench.api_models.base import CamelModel


class IngestReply(CamelModel):
    status: Literal["queued", "stored", "duplicate", "skipped"]
    reason: str | None = None
    event_id: int | None = None
    session_db_id: int | None = None
    prompt_number: int | None = None
    id: int | None = None  # the observation stored at once (a saved memory)


class MemorySaved(IngestReply):
    success: bool
