"""Session summaries, newest first."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.deps import RuntimeDep
from service.pagination import PageDep, page
from workbench.store import summaries

router = APIRouter(prefix="/api", tags=["summaries"])


@router.get("/summaries")
def list_summaries(runtime: RuntimeDep, params: PageDep) -> dict[str, Any]:
    conn = runtime.store.conn
    items, more = summaries.list_page(
        conn,
        project=params.project,
        offset=params.offset,
        limit=params.limit,
        platform_source=params.platform_source,
    )
    return page(items, more, params)
