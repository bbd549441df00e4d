"""The derived indexes: ``POST /api/reindex`` and ``GET /api/index/status``.

``POST /api/reindex`` returns at once (202) with the queued job: rebuilding vectors can take
minutes when the model has to embed (100k texts ≈ 8 min with MiniLM on 2 cores, ~0 s when
every text is in the embeddings cache), far past any sensible HTTP timeout, and ingest must
keep flowing meanwhile. The indexer thread runs it; ``GET /api/index/status`` reports its
progress (``reindex.done`` / ``reindex.total``) and outcome, which ``workbench reindex`` polls
for its progress bar. A second POST while one runs returns that same job.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from service.deps import RuntimeDep
from workbench.errors import ServiceUnavailable

router = APIRouter(prefix="/api", tags=["index"])


def _indexer(runtime: Any) -> Any:
    indexer = getattr(runtime, "indexer", None)
    if indexer is None or not indexer.is_alive():
        raise ServiceUnavailable(
            "the indexer is not running in this service; restart it with "
            "`workbench stop && workbench serve --detach`"
        )
    return indexer


@router.post("/reindex", status_code=202)
def reindex(runtime: RuntimeDep) -> JSONResponse:
    indexer = _indexer(runtime)
    job = indexer.request_reindex()
    return JSONResponse({"job": job.to_json(), "index": indexer.status()}, status_code=202)


@router.get("/index/status")
def index_status(runtime: RuntimeDep) -> dict[str, Any]:
    status: dict[str, Any] = _indexer(runtime).status()
    return status
