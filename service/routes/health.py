"""Liveness and readiness. ``/api/health`` is also how hooks recognise *our* service.

Health always answers 200 with ``"service": "workbench"`` while the process runs (the hooks
and ``workbench status`` find the service that way), and ``status`` says whether the store
can take writes: ``"ok"``, or ``"error"`` with a ``reason`` that says what to do (the database
file was deleted or replaced under the service: restart it). It is a plain ``def`` (thread
pool), so a write lock held elsewhere never delays it; its reads need no lock in WAL mode.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from service.deps import RuntimeDep
from workbench import __version__, spool
from workbench.errors import WorkbenchError
from workbench.store import events, schema

router = APIRouter(prefix="/api", tags=["health"])


@router.get("/health")
def health(runtime: RuntimeDep) -> dict[str, Any]:
    problem = runtime.store.problem()
    queue: dict[str, int] = {}
    version: int | None = None
    try:
        conn = runtime.store.conn
        queue = events.depth(conn)
        version = schema.schema_version(conn)
    except (sqlite3.Error, WorkbenchError) as exc:
        problem = problem or f"the database cannot be read: {exc}"
    return {
        "service": "workbench",
        "status": "ok" if problem is None else "error",
        **({"reason": problem} if problem else {}),
        "version": __version__,
        "schemaVersion": version,
        "queue": queue,
        "queueDepth": queue.get("pending", 0) + queue.get("claimed", 0),
        "compressor": runtime.settings.active_compressor(),
        "uptimeSeconds": round(runtime.uptime_s, 1),
        "pid": os.getpid(),
        "dataDir": str(runtime.settings.data_dir),
        "spool": spool.backlog(runtime.settings.spool_dir),
        "warnings": runtime.settings.load_warnings,
        # Semantic recall: "ready", or why not ("unavailable"/"disabled" → full text only).
        "embeddings": runtime.indexer.health() if runtime.indexer else {"state": "disabled"},
    }


@router.get("/readiness")
def readiness(runtime: RuntimeDep) -> JSONResponse:
    problem = runtime.store.problem()
    running = runtime.worker.is_alive()
    ready = running and problem is None
    body: dict[str, Any] = {"ready": ready, "worker": "running" if running else "stopped"}
    if problem:
        body["reason"] = problem
    return JSONResponse(body, status_code=200 if ready else 503)
