"""``create_app(settings)``: the FastAPI app, built per data dir (no module-level app).

- ``ROUTERS`` lists every router by hand, in the order routes should match (hot ones first);
  ``service/routes/__init__.py`` maps each module to its paths.
- Domain errors map to HTTP statuses in one handler (``WorkbenchError.status_code``), and
  request validation errors become a 422 that lists each bad field, so a client sees
  exactly what to fix.
- Only the service's own origin reads or writes: ``OwnOriginOnly`` (service/origin.py)
  refuses a ``Host`` other than 127.0.0.1/localhost/[::1] with our port (DNS rebinding),
  any other ``Origin`` on any request, and no-Origin loads from other sites on the API; CORS
  names only our own origins (its three spellings). ``BodyLimit`` caps bodies before
  parsing. ``InstanceGuard`` (outermost) stamps every reply with the data dir's id and
  refuses (421) a request meant for another data dir (``workbench/instance.py``). ``IdleTrim``
  gives the heap's freed pages back once the service goes quiet after requests.
- The lifespan starts the ``Runtime`` (store, worker, spool replay, PID lock) unless one is
  passed in (tests of validation edge cases use an in-process app). ``pid_lock`` may be a
  ``PidFile`` already held (``python -m service`` takes it before uvicorn starts); the
  runtime releases it at shutdown either way.
- No ``/docs`` or ``/redoc``: FastAPI's pages load Swagger UI / ReDoc from a CDN, unpinned,
  into this write-capable origin (and are blank offline). ``/openapi.json`` stays; point any
  OpenAPI viewer at it. Every HTML response gets the viewer's CSP (``HtmlSecurityHeaders``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.telemetry import TelemetryConfig

from service.boundary import TextBoundary
from service.idle_trim import IdleTrim
from service.instance_guard import InstanceGuard
from service.limits import BodyLimit, HtmlSecurityHeaders
from service.origin import OwnOriginOnly, own_origins
from service.routes import (
    agent,
    analytics,
    context,
    corpora,
    health,
    index,
    memory,
    observations,
    projects,
    prompts,
    queue,
    search,
    sessions,
    stale,
    stream,
    summaries,
    team,
    transcripts,
    transfer,
    viewer,
)
from service.routes import settings as settings_routes
from service.routes.viewer import SECURITY_HEADERS
from service.runtime import Runtime
from workbench import __version__, instance
from workbench.errors import WorkbenchError
from workbench.pidfile import PidFile
from workbench.settings import Settings

# Every router, in inclusion order; a new resource module is added here by hand.
# Routes match in inclusion order, one router at a time: the hook routes (every tool call),
# health and context (every SessionStart) and search go first, so the paths that hooks and
# agents hit never pay for matching the viewer's and analytics' routes. The corpus GET/DELETE
# routes take ``{name:path}``: corpora comes before agent, whose POSTs they cannot shadow.
ROUTERS: tuple[APIRouter, ...] = (
    sessions.router,
    health.router,
    context.router,
    search.router,
    observations.router,
    prompts.router,
    summaries.router,
    projects.router,
    analytics.router,
    corpora.router,
    agent.router,
    memory.router,
    index.router,
    queue.router,
    transfer.router,
    transcripts.router,
    stale.router,
    settings_routes.router,
    team.router,
    stream.router,
    viewer.router,
)

# FastAPI's built-in OpenTelemetry, all of it off: with ``FASTAPI_OTEL_AUTO_CONFIGURE=true``
# and an OTLP endpoint in the user's environment (set for their own apps; hooks start this
# service with that environment) and the SDK installed (``fastapi[standard]`` brings it), every
# request became a span carrying its query string (a search's words: memory) and every
# validation failure a log record, sent to that collector. No telemetry means none
# (tests/test_service_no_telemetry.py).
NO_TELEMETRY: TelemetryConfig = {
    "tracing": False,
    "metrics": False,
    "logs": False,
    "operation_spans": False,
    "auto_configure": False,
}


def create_app(settings: Settings, *, pid_lock: bool | PidFile = True) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = Runtime.start(settings, pid_lock=pid_lock)
        app.state.runtime = runtime
        try:
            yield
        finally:
            runtime.stop()

    app = FastAPI(
        title="workbench",
        version=__version__,
        description="Local memory service for coding agents (loopback only).",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        telemetry=NO_TELEMETRY,
    )
    for router in ROUTERS:
        app.include_router(router)

    @app.exception_handler(WorkbenchError)
    async def domain_error(_: Request, exc: WorkbenchError) -> JSONResponse:
        return JSONResponse(
            {"error": exc.code, "message": exc.message, **_jsonable(exc.details)},
            status_code=exc.status_code,
        )

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "field": ".".join(str(p) for p in err["loc"] if p != "body") or "body",
                "message": err["msg"],
                "type": err["type"],
            }
            for err in exc.errors()
        ]
        summary = "; ".join(f"{p['field']}: {p['message']}" for p in problems[:5])
        return JSONResponse(
            {"error": "INVALID_REQUEST", "message": summary, "errors": problems},
            status_code=422,
        )

    app.add_middleware(TextBoundary)  # innermost: surrogates, NaN, private tags (boundary.py)
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(own_origins(settings.port)),
        allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        allow_headers=["*"],
    )
    app.add_middleware(HtmlSecurityHeaders, headers=SECURITY_HEADERS)
    # Outside CORS, so another origin's preflight is a 403 too, never a CORS answer.
    app.add_middleware(OwnOriginOnly, port=settings.port)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    # Every request, refused or not, counts as activity; quiet after them: a heap trim.
    app.add_middleware(IdleTrim)
    # Outermost: every reply names this data dir, and a request for another one is refused.
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    app.state.instance_id = instance.ensure(settings.data_dir)
    app.add_middleware(
        InstanceGuard,
        instance_id=app.state.instance_id,
        data_dir=str(settings.data_dir),
        port=settings.port,
    )
    return app


def _jsonable(details: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in details.items() if isinstance(v, str | int | float | bool | list)}
