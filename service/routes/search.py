"""Search and timeline: layers 1 and 2 of search → timeline → fetch (paths are the contract).

- ``GET /api/search`` answers with the compact text index by default (about 20–40 tokens per
  hit) and with ``{"observations", "sessions", "prompts", "totalResults", "totalIsLowerBound",
  "query", "mode", "degraded"}`` for ``format=json``. Each hit carries ``rankers`` (``["fts"]``,
  ``["vector"]`` or ``["fts", "vector"]``: which rankers found it) and ``ranks`` (each one's
  rank). ``totalResults`` counts every match of the query under the filters (not the page), up
  to ``recall.totals.COUNT_CAP`` per kind (past it, that kind counts as the cap alone: 1,000+);
  ``totalIsLowerBound`` is true when counting stopped there or a vector ranker added hits.
  The text index shows no total, so for it nothing is counted.
- ``GET /api/timeline`` answers ``{"anchor", "items"}`` (JSON by default; ``format=text``).

``/api/search`` takes one query-parameter model, ``workbench.recall.search_query.SearchQuery``
(plus ``format``), so ``/openapi.json`` documents each field once and the CLI and MCP tools use
the same names. Array parameters accept csv or repeated keys (``types=bugfix,feature`` is
``types=bugfix&types=feature``). The old spellings (``obs_type``, ``obsType``, ``type``,
``dateStart``/``date_start``, ``dateEnd``/``date_end``, ``platformSource``, ``orderBy``) still
work for one release: the answer then carries deprecation headers (``service.deprecation``);
an old and a new spelling with different values is a 422 naming both. ``/api/timeline``'s old
``depthBefore``/``depthAfter`` (for ``depth_before``/``depth_after``) are handled the same way.
Every rule is checked by the model or the engine, so a bad value is a 400 (or a 422 for a
wrong type or bound) whose message says what to send.
The routes are plain ``def``: FastAPI runs them in its thread pool, and each thread uses its
own connection (``runtime.store.conn``).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import Field, field_validator

from service.deprecation import mark_deprecated
from service.deps import RuntimeDep
from service.runtime import Runtime
from workbench.api_models.search import SearchAnswer, Timeline
from workbench.errors import InvalidInput
from workbench.recall.search import SearchEngine
from workbench.recall.search_query import SearchQuery, SpellingConflict, deprecation_notice
from workbench.sources.local import LocalSource
from workbench.sources.source import MemorySource, TimelineAsk

router = APIRouter(prefix="/api", tags=["search"])

Text = Annotated[str | None, Query(max_length=2000)]
FORMATS = ("text", "json")
TEAM_HELP = "also read the team lake (workbench team init); local hits win on duplicates"


class SearchRequest(SearchQuery):
    """``SearchQuery`` plus how to answer (``format``): the HTTP edge's query parameters."""

    example: ClassVar[str] = "query=refund&types=bugfix&format=json"
    ignore_unknown: ClassVar[bool] = True  # other query parameters are ignored, as always

    format: Annotated[
        Literal["text", "json"], Field(description="text (a compact index, default) | json")
    ] = "text"

    @field_validator("format", mode="before")
    @classmethod
    def _format(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        text = value.strip().lower() or "text"
        if text not in FORMATS:
            raise InvalidInput(f"format={text!r} is not allowed; use format=text or format=json")
        return text


def engine_for(runtime: Runtime) -> SearchEngine:
    """The engine over the service's store, with the vector ranker when the runtime has one,
    and the service's memo of recent rankings' first observation (the timeline's anchor)."""
    return SearchEngine(
        runtime.store, runtime.settings, ranker=runtime.vector_ranker, anchors=runtime.anchors
    )


def source_for(runtime: Runtime, team: bool) -> MemorySource:
    """The service's store, read with the team lake when ``team`` (the one place it matters)."""
    local = LocalSource(engine_for(runtime))
    if not team:
        return local
    from workbench.team.source import with_team

    return with_team(runtime.settings, local)


@router.get(
    "/search",
    response_model=None,
    responses={
        200: {"model": SearchAnswer, "content": {"text/plain": {"schema": {"type": "string"}}}}
    },
)
def search(runtime: RuntimeDep, params: Annotated[SearchRequest, Query()]) -> Response:
    """Search observations, session summaries and prompts (BM25 + vectors, fused)."""
    as_json = params.format == "json"
    # The text index shows no total: the search counts none (same hits).
    reply = source_for(runtime, params.team).search(params, count_totals=as_json)
    answer: Response = JSONResponse(reply.wire()) if as_json else PlainTextResponse(reply.text())
    mark_deprecated(answer, params.deprecations())
    return answer


@router.get(
    "/timeline",
    response_model=None,
    responses={200: {"model": Timeline, "content": {"text/plain": {"schema": {"type": "string"}}}}},
)
def timeline(
    runtime: RuntimeDep,
    anchor: Annotated[
        str | None, Query(max_length=200, description="observation id | S<summary id> | ISO time")
    ] = None,
    query: Text = None,
    depth_before: Annotated[int | None, Query()] = None,
    depthBefore: Annotated[
        int | None, Query(deprecated=True, description="old spelling of depth_before")
    ] = None,
    depth_after: Annotated[int | None, Query()] = None,
    depthAfter: Annotated[
        int | None, Query(deprecated=True, description="old spelling of depth_after")
    ] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
    fmt: Annotated[str, Query(alias="format", description="json | text")] = "json",
    team: Annotated[bool, Query(description=TEAM_HELP)] = False,
) -> Response:
    """Observations, summaries and prompts around an anchor, in time order, anchor marked."""
    fmt = fmt.strip().lower() or "json"
    if fmt not in FORMATS:
        raise InvalidInput(f"format={fmt!r} is not allowed; use format=json or format=text")
    before = one_depth(depth_before, depthBefore, "depth_before", "depthBefore")
    after = one_depth(depth_after, depthAfter, "depth_after", "depthAfter")
    notices = [
        deprecation_notice(old, new)
        for old, new, value in (
            ("depthBefore", "depth_before", depthBefore),
            ("depthAfter", "depth_after", depthAfter),
        )
        if value is not None
    ]
    ask = TimelineAsk(
        anchor=anchor,
        query=query,
        depth_before=5 if before is None else before,
        depth_after=5 if after is None else after,
        project=project,
    )
    reply = source_for(runtime, team).timeline(ask)
    answer: Response = (
        PlainTextResponse(reply.text()) if fmt == "text" else JSONResponse(reply.wire())
    )
    mark_deprecated(answer, notices)
    return answer


def one_depth(value: int | None, old: int | None, name: str, old_name: str) -> int | None:
    """A timeline depth sent under its name or its old camelCase one; both must agree."""
    if value is not None and old is not None and value != old:
        raise SpellingConflict(
            f"{old_name}={old} and {name}={value} disagree; {old_name} is the old spelling of "
            f"{name}: send only {name}",
            fields=[old_name, name],
        )
    return value if value is not None else old
