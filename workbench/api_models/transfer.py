"""``GET /api/export`` and ``POST /api/import``: the one workbench-export JSON format.

Rows are the stored tables' columns (``workbench.store.transfer`` writes and checks them).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ExportDocument(BaseModel):
    format: str
    version: int
    exported_at: str
    sessions: list[dict[str, Any]]
    prompts: list[dict[str, Any]]
    observations: list[dict[str, Any]]
    summaries: list[dict[str, Any]]


class ImportCounts(BaseModel):
    imported: int
    skipped: int


class Imported(BaseModel):
    """Per kind (sessions, prompts, observations, summaries): rows added and rows kept."""

    imported: dict[str, ImportCounts]
