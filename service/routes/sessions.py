"""The hook routes. Enqueue and return: each answers in about a millisecond.

``async def`` on purpose: the work is one short SQLite transaction (tens of microseconds in
WAL mode), cheaper than a hop to the thread pool, and these routes carry every tool call.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.deps import EventKeyDep, IngestorDep
from service.schemas import SessionEnd, SessionInit, Summarize, ToolObservation

router = APIRouter(prefix="/api/sessions", tags=["sessions"])


@router.post("/init")
async def init(body: SessionInit, ingestor: IngestorDep, key: EventKeyDep) -> dict[str, Any]:
    return body.ingest(ingestor, key).to_json()


@router.post("/observations")
async def observation(
    body: ToolObservation, ingestor: IngestorDep, key: EventKeyDep
) -> dict[str, Any]:
    return body.ingest(ingestor, key).to_json()


@router.post("/summarize")
async def summarize(body: Summarize, ingestor: IngestorDep, key: EventKeyDep) -> dict[str, Any]:
    return body.ingest(ingestor, key).to_json()


@router.post("/end")
async def end(body: SessionEnd, ingestor: IngestorDep, key: EventKeyDep) -> dict[str, Any]:
    return body.ingest(ingestor, key).to_json()
