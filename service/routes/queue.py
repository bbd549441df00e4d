"""The work queue and the spool: replay, parked events, retry, recompress."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.deps import RuntimeDep
from service.schemas import Recompress, RetryFailed
from workbench.api_models.queue import FailedEvents, Recompressed, Requeued, SpoolReplay
from workbench.clock import ms_from_iso
from workbench.compress.base import build_compressor
from workbench.derive import recompress
from workbench.errors import CompressionError, InvalidInput
from workbench.store import events

router = APIRouter(prefix="/api", tags=["queue"])


@router.post("/spool/replay", response_model=SpoolReplay)
def replay_spool(runtime: RuntimeDep) -> dict[str, Any]:
    return runtime.replay_spool().to_json()


@router.get("/queue/failed", response_model=FailedEvents)
def failed(runtime: RuntimeDep) -> dict[str, Any]:
    items = events.failed(runtime.store.conn, limit=200)
    return {"items": items, "count": len(items)}


@router.post("/queue/retry", response_model=Requeued)
def retry(body: RetryFailed, runtime: RuntimeDep) -> dict[str, Any]:
    count = events.retry_failed(runtime.store.conn, body.eventIds)
    runtime.worker.notify()
    return {"requeued": count}


@router.post("/recompress", response_model=Recompressed)
def recompress_route(body: Recompress, runtime: RuntimeDep) -> dict[str, Any]:
    try:
        since = ms_from_iso(body.since) if body.since else None
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    try:
        compressor = build_compressor(runtime.settings, body.compressor)
    except CompressionError as exc:  # a provider that is not configured: say what to set
        raise InvalidInput(f"cannot recompress with {body.compressor}: {exc.message}") from None
    try:
        report = recompress(runtime.store, compressor, project=body.project, since_ms=since)
    finally:  # an LLM compressor holds an HTTP client: one per request, closed with it
        close = getattr(compressor, "close", None)
        if close is not None:
            close()
    return {"compressor": compressor.name, **report.to_json()}
