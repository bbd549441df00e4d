"""The one page shape every list route returns: ``{items, hasMore, offset, limit}``.

Every list takes ``project`` and ``platform_source`` (or ``platformSource``: one agent
platform; a 422 listing the known ones for any other), as the viewer's filters do.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query
from pydantic import BaseModel

from workbench.bounds import SQLITE_INT_MAX
from workbench.platform_filter import one_platform


class PageParams(BaseModel):
    offset: int
    limit: int
    project: str | None
    platform_source: str | None = None


async def page_params(
    offset: Annotated[int, Query(ge=0, le=SQLITE_INT_MAX, description="rows to skip")] = 0,
    limit: Annotated[int, Query(ge=1, le=100, description="rows per page")] = 20,
    project: Annotated[str | None, Query(max_length=200)] = None,
    platform_source: Annotated[
        str | None, Query(max_length=200, description="one agent platform, e.g. gemini-cli")
    ] = None,
    platformSource: Annotated[str | None, Query(max_length=200)] = None,
) -> PageParams:
    return PageParams(
        offset=offset,
        limit=limit,
        project=project or None,
        platform_source=one_platform(platform_source, platformSource),
    )


PageDep = Annotated[PageParams, Depends(page_params)]


def page(items: list[Any], has_more: bool, params: PageParams) -> dict[str, Any]:
    return {
        "items": [i.model_dump() if hasattr(i, "model_dump") else i for i in items],
        "hasMore": has_more,
        "offset": params.offset,
        "limit": params.limit,
    }
