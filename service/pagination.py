"""The one page shape every list route returns: ``{items, hasMore, offset, limit}``.

Every list takes ``project`` and ``platform_source`` (one agent platform; a 422 listing the
known ones for any other), as the viewer's filters do. The old ``platformSource`` works for one
release and adds deprecation headers (``service.deprecation``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, TypeVar

from fastapi import Depends, Query, Response
from pydantic import BaseModel

from service.deprecation import mark_deprecated, one_spelling
from workbench.api_models.pages import Page
from workbench.bounds import SQLITE_INT_MAX
from workbench.recall.filters import SearchFilters
from workbench.store.pages import Where

T = TypeVar("T", bound=BaseModel)


class PageParams(BaseModel):
    offset: int
    limit: int
    filters: SearchFilters = SearchFilters()  # project and platform_source, built once here

    def where(self, table: str) -> Where:
        """The filter compiled for ``table`` by the one SQLite compiler (``SearchFilters``),
        so a list's ``project`` and ``platform_source`` mean what they mean in search."""
        return self.filters.table_sql(table, table)


async def page_params(
    response: Response,
    offset: Annotated[int, Query(ge=0, le=SQLITE_INT_MAX, description="rows to skip")] = 0,
    limit: Annotated[int, Query(ge=1, le=100, description="rows per page")] = 20,
    project: Annotated[str | None, Query(max_length=200)] = None,
    platform_source: Annotated[
        str | None, Query(max_length=200, description="one agent platform, e.g. gemini-cli")
    ] = None,
    platformSource: Annotated[
        str | None,
        Query(max_length=200, description="deprecated: use platform_source", deprecated=True),
    ] = None,
) -> PageParams:
    sent = {"platform_source": platform_source, "platformSource": platformSource}
    values, _, notices = one_spelling(sent, {"platform_source"})
    mark_deprecated(response, notices)
    # One value, validated here (an unknown platform is a 422 naming the known ones).
    filters = SearchFilters(project=project, platform_source=values.get("platform_source"))
    return PageParams(offset=offset, limit=limit, filters=filters)


PageDep = Annotated[PageParams, Depends(page_params)]


def page(items: Sequence[T], has_more: bool, params: PageParams) -> Page[T]:
    """The reply of a list route (``workbench.api_models.pages.Page``)."""
    return Page[T](items=list(items), has_more=has_more, offset=params.offset, limit=params.limit)
