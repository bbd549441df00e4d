"""``POST /api/stale``: observations a later change made stale (``workbench.staleness``)."""

from __future__ import annotations

from pydantic import Field

from workbench.api_models.base import CamelModel
from workbench.models import StaleObservation


class StaleRequest(CamelModel):
    """What to check: one project (by name) or all; how many stale ones to list."""

    model_config = CamelModel.model_config | {"extra": "forbid"}

    project: str | None = Field(default=None, min_length=1, max_length=200)
    limit: int = Field(default=500, ge=1, le=10_000)
    commits: bool = False  # list the commits since that touched the changed files (git log)


class StaleItem(StaleObservation, CamelModel):
    pass  # ``workbench.models.StaleObservation`` with camelCase wire names


class StaleReply(CamelModel):
    """``checked``: observations with evidence checked; ``stale``: how many are stale (the
    list holds the newest ``limit`` of them)."""

    checked: int
    stale: int
    items: list[StaleItem]
