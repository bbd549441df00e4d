"""A memory saved by hand: stored at once, its id returned."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.deps import EventKeyDep, IngestorDep
from service.schemas import MemorySave
from workbench.api_models.ingest import MemorySaved

router = APIRouter(prefix="/api/memory", tags=["memory"])


@router.post("/save", response_model=MemorySaved, response_model_exclude_unset=True)
def save(body: MemorySave, ingestor: IngestorDep, key: EventKeyDep) -> dict[str, Any]:
    result = body.ingest(ingestor, key)
    return {**result.to_json(), "success": True}
