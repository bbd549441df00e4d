"""``POST /api/stale``: check every observation's evidence, record the verdicts, list the
stale ones (``workbench stale``). A POST because it records the verdicts in
``observation_staleness`` for DuckDB's read-only ``staleness`` view."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.deps import RuntimeDep
from workbench.api_models.stale import StaleReply, StaleRequest
from workbench.staleness import report

router = APIRouter(prefix="/api", tags=["stale"])


@router.post("/stale", response_model=StaleReply)
def stale(body: StaleRequest, runtime: RuntimeDep) -> dict[str, Any]:
    found = report.run(
        runtime.store.conn, project=body.project, limit=body.limit, commits=body.commits
    )
    return {
        "checked": found.checked,
        "stale": found.stale,
        "items": [item.model_dump() for item in found.items],
    }
