"""Liveness and readiness. ``/api/health`` is also how hooks recognise *our* service."""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from service.deps import RuntimeDep
from workbench import __version__, spool
from workbench.store import events, schema

router = APIRouter(prefix="/api", tags=["health"])


@router.get("/health")
def health(runtime: RuntimeDep) -> dict[str, Any]:
    conn = runtime.store.conn
    queue = events.depth(conn)
    return {
        "service": "workbench",
        "status": "ok",
        "version": __version__,
        "schemaVersion": schema.schema_version(conn),
        "queue": queue,
        "queueDepth": queue["pending"] + queue["claimed"],
        "compressor": runtime.settings.active_compressor(),
        "uptimeSeconds": round(runtime.uptime_s, 1),
        "pid": os.getpid(),
        "dataDir": str(runtime.settings.data_dir),
        "spool": spool.backlog(runtime.settings.spool_dir),
        "warnings": runtime.settings.load_warnings,
        # "paused" (with the reason) while settings.json cannot be read: nothing is captured.
        "capture": runtime.settings.capture_state(),
        # Semantic recall: "ready", or why not ("unavailable"/"disabled" → full text only).
        "embeddings": runtime.indexer.health() if runtime.indexer else {"state": "disabled"},
    }


@router.get("/readiness")
def readiness(runtime: RuntimeDep) -> JSONResponse:
    ready = runtime.worker.is_alive()
    body = {"ready": ready, "worker": "running" if ready else "stopped"}
    return JSONResponse(body, status_code=200 if ready else 503)
