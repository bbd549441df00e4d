"""User prompts, newest first (private prompts were never stored)."""

from __future__ import annotations

from fastapi import APIRouter

from service.deps import RuntimeDep
from service.pagination import PageDep, page
from workbench.api_models.pages import Page
from workbench.models import Prompt
from workbench.store import sessions

router = APIRouter(prefix="/api", tags=["prompts"])


@router.get("/prompts")
def list_prompts(runtime: RuntimeDep, params: PageDep) -> Page[Prompt]:
    conn = runtime.store.conn
    items, more = sessions.list_prompts(
        conn,
        where=params.where("user_prompts"),
        offset=params.offset,
        limit=params.limit,
    )
    return page(items, more, params)
