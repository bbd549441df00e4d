"""``GET /api/stats`` (the store overview) and its analytics sub-resources
``GET /api/stats/{economics,types,activity,files,concepts,cooccurrence,sessions,roi}``.

The overview counts the store's rows and reports the worker and the spool. Each
sub-resource runs one ``knowledge.reports`` report over the read-only DuckDB views and returns
``{"items": [...], "summary": {...}}`` (the same JSON as ``workbench stats --json``). Query
parameters: ``project``, ``since``, ``until`` (ISO; a plain end date includes that day),
``platform_source`` (one agent platform, a 422 listing the known ones for any other; the old
``dateStart``/``dateEnd``/``platformSource`` work for one release with deprecation headers),
``by`` where a statistic has groupings, ``limit`` for the top-N ones.

The reports run in the service's analytics child (``knowledge.report_process``), never in
this process: DuckDB reads SQLite through a second SQLite library, and two of them on one
file in one process corrupt it (issue 19: SIGBUS, broken indexes). A child that dies or
overruns answers 503 ``ANALYTICS_UNAVAILABLE`` and is replaced on the next request.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response

from service.deprecation import mark_deprecated, one_spelling
from service.deps import RuntimeDep
from service.runtime import Runtime
from workbench import spool
from workbench.api_models.analytics import PlatformCounts, Report, StoreOverview, WorkerState
from workbench.api_models.queue import FailedEvent
from workbench.errors import ServiceUnavailable
from workbench.knowledge.stats import Scope
from workbench.store import stats

router = APIRouter(prefix="/api/stats", tags=["analytics"])


async def scope_params(
    response: Response,
    project: Annotated[str | None, Query(max_length=200, description="exact project")] = None,
    since: Annotated[
        str | None, Query(max_length=40, description="ISO date/time, inclusive")
    ] = None,
    until: Annotated[
        str | None, Query(max_length=40, description="ISO date (whole day) or time, inclusive")
    ] = None,
    platform_source: Annotated[
        str | None, Query(max_length=200, description="one agent platform, e.g. gemini-cli")
    ] = None,
    dateStart: Annotated[
        str | None, Query(max_length=40, description="deprecated: use since", deprecated=True)
    ] = None,
    dateEnd: Annotated[
        str | None, Query(max_length=40, description="deprecated: use until", deprecated=True)
    ] = None,
    platformSource: Annotated[
        str | None,
        Query(max_length=200, description="deprecated: use platform_source", deprecated=True),
    ] = None,
) -> Scope:
    sent = {
        "since": since,
        "until": until,
        "platform_source": platform_source,
        "dateStart": dateStart,
        "dateEnd": dateEnd,
        "platformSource": platformSource,
    }
    values, came_as, notices = one_spelling(sent, {"since", "until", "platform_source"})
    mark_deprecated(response, notices)
    return Scope.parse(
        project,
        values.get("since"),
        values.get("until"),
        values.get("platform_source"),
        names=(came_as["since"], came_as["until"]),
    )


ScopeDep = Annotated[Scope, Depends(scope_params)]
Limit = Annotated[int, Query(ge=1, le=1000, description="rows to return")]


def _report(runtime: Runtime, kind: str, scope: Scope, **options: Any) -> Report:
    """The child's report, parsed into the reply once where its JSON line crosses the pipe."""
    if runtime.reports is None:
        raise ServiceUnavailable("the analytics process is not set up in this service")
    return Report.model_validate(runtime.reports.report(kind, scope, **options))


@router.get("", response_model=StoreOverview)
def overview(runtime: RuntimeDep) -> StoreOverview:
    store = stats.overview(runtime.store.conn)
    return StoreOverview(
        totals=store["totals"],
        types=store["types"],
        platforms={name: PlatformCounts(**counts) for name, counts in store["platforms"].items()},
        queue=store["queue"],
        failed=[FailedEvent.model_validate(event) for event in store["failed"]],
        db_size_bytes=store["dbSizeBytes"],
        worker=WorkerState(
            processed=runtime.worker.processed,
            last_error=runtime.worker.last_error,
            compressor=runtime.settings.active_compressor(),
        ),
        spool=spool.backlog(runtime.settings.spool_dir),
        uptime_seconds=round(runtime.uptime_s, 1),
    )


@router.get("/economics", response_model=Report, response_model_exclude_unset=True)
def economics(
    runtime: RuntimeDep,
    scope: ScopeDep,
    by: Annotated[Literal["project", "type", "day", "platform_source"], Query()] = "project",
) -> Report:
    """Read tokens vs discovery tokens and savings %, per project, type, day or platform."""
    return _report(runtime, "economics", scope, by=by)


@router.get("/types", response_model=Report, response_model_exclude_unset=True)
def types(runtime: RuntimeDep, scope: ScopeDep) -> Report:
    """Observations per type, with their share and discovery tokens."""
    return _report(runtime, "types", scope)


@router.get("/activity", response_model=Report, response_model_exclude_unset=True)
def activity(
    runtime: RuntimeDep,
    scope: ScopeDep,
    by: Annotated[Literal["day", "project", "platform_source"], Query()] = "day",
) -> Report:
    """Sessions, prompts, observations and summaries per day, project or platform."""
    return _report(runtime, "activity", scope, by=by)


@router.get("/files", response_model=Report, response_model_exclude_unset=True)
def files(runtime: RuntimeDep, scope: ScopeDep, limit: Limit = 20) -> Report:
    """The most read and modified files."""
    return _report(runtime, "files", scope, limit=limit)


@router.get("/concepts", response_model=Report, response_model_exclude_unset=True)
def concepts(runtime: RuntimeDep, scope: ScopeDep, limit: Limit = 20) -> Report:
    """The most frequent concepts."""
    return _report(runtime, "concepts", scope, limit=limit)


@router.get("/cooccurrence", response_model=Report, response_model_exclude_unset=True)
def cooccurrence(runtime: RuntimeDep, scope: ScopeDep, limit: Limit = 20) -> Report:
    """Concept pairs that appear in the same observation, most frequent first."""
    return _report(runtime, "cooccurrence", scope, limit=limit)


@router.get("/sessions", response_model=Report, response_model_exclude_unset=True)
def sessions(runtime: RuntimeDep, scope: ScopeDep, limit: Limit = 50) -> Report:
    """Session timelines: start, last activity, counts, duration; newest first."""
    return _report(runtime, "sessions", scope, limit=limit)


@router.get("/roi", response_model=Report, response_model_exclude_unset=True)
def roi(runtime: RuntimeDep, scope: ScopeDep, limit: Limit = 50) -> Report:
    """Memory ROI from the injection ledger: cost, injections, fetches after injection."""
    return _report(runtime, "roi", scope, limit=limit)
