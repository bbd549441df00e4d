"""``GET /api/projects``: project names, most recent first, their counts and their folders."""

from __future__ import annotations

from workbench.api_models.base import CamelModel


class ProjectFolder(CamelModel):
    """One folder a project name stands for (its key, m012): ``clientA/api`` and
    ``clientB/api`` are two folders of the name ``api``, told apart by ``label``."""

    key: str
    label: str
    sessions: int
    observations: int


class ProjectDetail(CamelModel):
    name: str
    observations: int
    sessions: int
    summaries: int
    last_activity: str | None
    folders: list[ProjectFolder] = []


class Projects(CamelModel):
    projects: list[str]
    details: list[ProjectDetail]
