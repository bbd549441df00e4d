"""Search and timeline replies (``GET /api/search?format=json``, ``GET /api/timeline``).

A hit is ``workbench.recall.hits.SearchHit`` and a timeline ``workbench.recall.timeline
.Timeline`` (snake_case fields, as stored); the search envelope is camelCase.
"""

from __future__ import annotations

from workbench.api_models.base import CamelModel
from workbench.recall.hits import SearchHit
from workbench.recall.timeline import Timeline

__all__ = ["SearchReply", "Timeline"]


class SearchReply(CamelModel):
    """Hits per kind, newest or best first, and what was counted and ran."""

    observations: list[SearchHit]
    sessions: list[SearchHit]
    prompts: list[SearchHit]
    total_results: int
    total_is_lower_bound: bool
    query: str | None
    mode: str
    degraded: str | None
    vectors_behind: int | None
    vectors_static: int | None = None
