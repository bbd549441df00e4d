"""Store statistics and the project list."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.deps import RuntimeDep
from workbench import spool
from workbench.store import stats

router = APIRouter(prefix="/api", tags=["stats"])


@router.get("/stats")
def get_stats(runtime: RuntimeDep) -> dict[str, Any]:
    conn = runtime.store.conn
    return {
        **stats.overview(conn),
        "worker": {
            "processed": runtime.worker.processed,
            "lastError": runtime.worker.last_error,
            "compressor": runtime.settings.active_compressor(),
        },
        "spool": spool.backlog(runtime.settings.spool_dir),
        "uptimeSeconds": round(runtime.uptime_s, 1),
    }


@router.get("/projects")
def get_projects(runtime: RuntimeDep) -> dict[str, Any]:
    details = stats.projects(runtime.store.conn)
    return {"projects": [d["name"] for d in details], "details": details}
