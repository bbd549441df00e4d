"""``GET /api/projects``: every project in the store, with its counts (the viewer's filter).

Its own resource: a project is what sessions, observations and summaries are grouped by, so
none of their modules is a better home.
"""

from __future__ import annotations

from fastapi import APIRouter

from service.deps import RuntimeDep
from workbench.api_models.projects import ProjectDetail, Projects
from workbench.store import stats

router = APIRouter(prefix="/api", tags=["projects"])


@router.get("/projects", response_model=Projects)
def get_projects(runtime: RuntimeDep) -> Projects:
    details = [ProjectDetail.model_validate(d) for d in stats.projects(runtime.store.conn)]
    return Projects(projects=[d.name for d in details], details=details)
