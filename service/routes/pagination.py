"""The one page shape every list route returns: ``{items, hasMore, offset, limit}``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query
from pydantic import BaseModel

from workbench.bounds import SQLITE_INT_MAX


class PageParams(BaseModel):
    offset: int
    limit: int
    project: str | None


async def page_params(
    offset: Annotated[int, Query(ge=0, le=SQLITE_INT_MAX, description="rows to skip")] = 0,
    limit: Annotated[int, Query(ge=1, le=100, description="rows per page")] = 20,
    project: Annotated[str | None, Query(max_length=200)] = None,
) -> PageParams:
    return PageParams(offset=offset, limit=limit, project=project or None)


PageDep = Annotated[PageParams, Depends(page_params)]


def page(items: list[Any], has_more: bool, params: PageParams) -> dict[str, Any]:
    return {
        "items": [i.model_dump() if hasattr(i, "model_dump") else i for i in items],
        "hasMore": has_more,
        "offset": params.offset,
        "limit": params.limit,
    }
