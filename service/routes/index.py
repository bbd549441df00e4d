"""The derived indexes: ``POST /api/reindex`` and ``GET /api/index/status``.

``POST /api/reindex`` returns at once (202) with the queued job: rebuilding vectors can take
minutes when the model has to embed (100k texts ≈ 8 min with MiniLM on 2 cores, ~0 s when
every text is in the embeddings cache), far past any sensible HTTP timeout, and ingest must
keep flowing meanwhile. The indexer thread runs it; ``GET /api/index/status`` reports its
progress (``reindex.done`` / ``reindex.total``) and outcome, which ``workbench reindex`` polls
for its progress bar. A second POST while one runs returns that same job. The status also
carries ``timelineAnchors`` (``recall.anchor_memo``): the timeline anchors reused from a search
of the same query (``reused``) and those ranked (``ranked``), and the entries ``held``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from service.deps import IndexerDep, RuntimeDep
from workbench.api_models.index import IndexStatus, ReindexQueued

router = APIRouter(prefix="/api", tags=["index"])


@router.post("/reindex", status_code=202, response_model=ReindexQueued)
def reindex(indexer: IndexerDep) -> JSONResponse:
    job = indexer.request_reindex()
    return JSONResponse({"job": job.to_json(), "index": indexer.status()}, status_code=202)


@router.get("/index/status", response_model=IndexStatus)
def index_status(indexer: IndexerDep, runtime: RuntimeDep) -> dict[str, Any]:
    """The indexer's state, and ``timelineAnchors``: the memo of recent rankings' first
    observation (how many it holds, how many timeline anchors it gave, how many were ranked)."""
    status: dict[str, Any] = indexer.status()
    status["timelineAnchors"] = runtime.anchors.status()
    return status
