"""Search and timeline: layers 1 and 2 of search → timeline → fetch (paths are the contract).

- ``GET /api/search`` answers with the compact text index by default (about 20–40 tokens per
  hit) and with ``{"observations", "sessions", "prompts", "totalResults", "totalIsLowerBound",
  "query", "mode", "degraded"}`` for ``format=json``. Each hit carries ``rankers`` (``["fts"]``,
  ``["vector"]`` or ``["fts", "vector"]``: which rankers found it) and ``ranks`` (each one's
  rank). ``totalResults`` counts every match of the query under the filters (not the page), up
  to ``recall.totals.COUNT_CAP`` per kind; ``totalIsLowerBound`` is true when counting stopped
  there or a vector ranker added hits.
- ``GET /api/timeline`` answers ``{"anchor", "items"}`` (JSON by default; ``format=text``).

Array parameters accept csv or repeated keys (``obs_type=bugfix,feature`` is
``obs_type=bugfix&obs_type=feature``). camelCase and snake_case spellings are both accepted
where clients differ (``dateStart``/``date_start``, ``depth_before``/``depthBefore``).
Every rule is checked by the engine, so a bad value is a 400 whose message says what to send.
The routes are plain ``def``: FastAPI runs them in its thread pool, and each thread uses its
own connection (``runtime.store.conn``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from service.deps import RuntimeDep
from workbench.errors import InvalidInput
from workbench.platform_filter import one_platform
from workbench.recall import compact
from workbench.recall.filters import SearchFilters
from workbench.recall.search import MAX_OFFSET, SearchEngine

router = APIRouter(prefix="/api", tags=["search"])

ListParam = Annotated[list[str] | None, Query()]
Text = Annotated[str | None, Query(max_length=2000)]
FORMATS = ("text", "json")


@dataclass
class SearchParams:
    query: str | None
    filters: SearchFilters
    types: list[str]
    mode: str
    order_by: str
    limit: int
    offset: int
    fmt: str
    team: bool = False


TEAM_HELP = "also read the team lake (workbench team init); local hits win on duplicates"


async def search_params(
    query: Annotated[str | None, Query(max_length=2000, description="words to search")] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
    projects: ListParam = None,
    kind: Annotated[
        list[str] | None,
        Query(alias="type", description="observations | sessions | prompts (csv); all if omitted"),
    ] = None,
    obs_type: Annotated[list[str] | None, Query(description="observation types (csv)")] = None,
    obsType: ListParam = None,  # the camelCase spelling some clients send
    concepts: ListParam = None,
    files: Annotated[list[str] | None, Query(description="path prefixes (csv)")] = None,
    dateStart: Text = None,
    date_start: Text = None,
    dateEnd: Text = None,
    date_end: Text = None,
    platform_source: Text = None,
    platformSource: Text = None,
    orderBy: Text = None,
    order_by: Text = None,
    mode: Annotated[str, Query(description="hybrid | fts | vector")] = "hybrid",
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    fmt: Annotated[str, Query(alias="format", description="text | json")] = "text",
    team: Annotated[bool, Query(description=TEAM_HELP)] = False,
) -> SearchParams:
    fmt = fmt.strip().lower() or "text"
    if fmt not in FORMATS:
        raise InvalidInput(f"format={fmt!r} is not allowed; use format=text or format=json")
    filters = SearchFilters(
        project=project,
        projects=projects or [],
        obs_types=[*(obs_type or []), *(obsType or [])],
        concepts=concepts or [],
        files=files or [],
        date_start=dateStart or date_start,
        date_end=dateEnd or date_end,
        platform_source=one_platform(platform_source, platformSource),
    )
    return SearchParams(
        query=query,
        filters=filters,
        types=kind or [],
        mode=mode.strip().lower(),
        order_by=(orderBy or order_by or "relevance").strip(),
        limit=limit,
        offset=offset,
        fmt=fmt,
        team=team,
    )


def engine_for(runtime: Any) -> SearchEngine:
    """The engine over the service's store, with the vector ranker when the runtime has one."""
    return SearchEngine(
        runtime.store, runtime.settings, ranker=getattr(runtime, "vector_ranker", None)
    )


@router.get("/search", response_model=None)
def search(
    runtime: RuntimeDep, params: Annotated[SearchParams, Depends(search_params)]
) -> Response:
    """Search observations, session summaries and prompts (BM25 + vectors, fused)."""
    engine = engine_for(runtime)

    def page(limit: int, offset: int) -> Any:
        return engine.search(
            params.query,
            params.filters,
            types=params.types,
            mode=params.mode,
            order_by=params.order_by,
            limit=limit,
            offset=offset,
        )

    if params.team:
        from workbench.team import search as team_search

        data = team_search.with_team_search(
            runtime.settings,
            lambda limit, offset: page(limit, offset).to_json(),
            query=params.query,
            filters=params.filters,
            types=params.types,
            limit=params.limit,
            offset=params.offset,
        )
        if params.fmt == "json":
            return JSONResponse(data)
        return PlainTextResponse(team_search.search_text(data))
    result = page(params.limit, params.offset)
    if params.fmt == "json":
        return JSONResponse(result.to_json())
    return PlainTextResponse(compact.search_index(result))


@router.get("/timeline", response_model=None)
def timeline(
    runtime: RuntimeDep,
    anchor: Annotated[
        str | None, Query(max_length=200, description="observation id | S<summary id> | ISO time")
    ] = None,
    query: Text = None,
    depth_before: Annotated[int | None, Query()] = None,
    depthBefore: Annotated[int | None, Query()] = None,
    depth_after: Annotated[int | None, Query()] = None,
    depthAfter: Annotated[int | None, Query()] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
    fmt: Annotated[str, Query(alias="format", description="json | text")] = "json",
    team: Annotated[bool, Query(description=TEAM_HELP)] = False,
) -> Response:
    """Observations, summaries and prompts around an anchor, in time order, anchor marked."""
    fmt = fmt.strip().lower() or "json"
    if fmt not in FORMATS:
        raise InvalidInput(f"format={fmt!r} is not allowed; use format=json or format=text")
    before = depth_before if depth_before is not None else depthBefore
    after = depth_after if depth_after is not None else depthAfter
    result = engine_for(runtime).timeline(
        anchor=anchor,
        query=query,
        depth_before=5 if before is None else before,
        depth_after=5 if after is None else after,
        project=project,
    )
    if team:
        from workbench.team import read

        data = read.with_team_timeline(runtime.settings, result.to_json(), project)
        if fmt == "text":
            return PlainTextResponse(read.timeline_text(data))
        return JSONResponse(data)
    if fmt == "text":
        return PlainTextResponse(compact.timeline_text(result))
    return JSONResponse(result.to_json())
