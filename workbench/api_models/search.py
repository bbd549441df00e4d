"""Search and timeline replies (``GET /api/search?format=json``, ``GET /api/timeline``).

A hit is ``workbench.recall.hits.SearchHit`` and a timeline ``workbench.recall.timeline
.Timeline`` (snake_case fields, as stored); the search envelope is camelCase.
"""

from __future__ import annotations

from pydantic import Field

from workbench.api_models.base import CamelModel
from workbench.recall.hits import SearchHit
from workbench.recall.timeline import Timeline

__all__ = ["SearchReply", "Timeline"]


class SearchReply(CamelModel):
    """Hits per kind, newest or best first, and what was counted and ran."""

    observations: list[SearchHit]
    sessions: list[SearchHit]
    prompts: list[SearchHit]
    total_results: int = Field(
        description="every match, not the page; per kind at most 1,000 (recall.totals.COUNT_CAP)"
        ": past it the kind counts as 1,000 and totalIsLowerBound is true"
    )
    total_is_lower_bound: bool = Field(
        description="true when a count stopped at its cap or budget, or a vector ranker added hits"
    )
    query: str | None
    mode: str
    degraded: str | None
    vectors_behind: int | None
    vectors_static: int | None = None
