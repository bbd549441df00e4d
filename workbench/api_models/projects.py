"""``GET /api/projects``: project names, most recent first, and their counts."""

from __future__ import annotations

from workbench.api_models.base import CamelModel


class ProjectDetail(CamelModel):
    name: str
    observations: int
    sessions: int
    summaries: int
    last_activity: str | None


class Projects(CamelModel):
    projects: list[str]
    details: list[ProjectDetail]
