"""Session summaries, newest first."""

from __future__ import annotations

from fastapi import APIRouter

from service.deps import RuntimeDep
from service.pagination import PageDep, page
from workbench.api_models.pages import Page
from workbench.models import Summary
from workbench.store import summaries

router = APIRouter(prefix="/api", tags=["summaries"])


@router.get("/summaries")
def list_summaries(runtime: RuntimeDep, params: PageDep) -> Page[Summary]:
    conn = runtime.store.conn
    items, more = summaries.list_page(
        conn,
        where=params.where("session_summaries"),
        offset=params.offset,
        limit=params.limit,
    )
    return page(items, more, params)
