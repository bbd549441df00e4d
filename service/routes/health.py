"""Liveness and readiness. ``/api/health`` is also how hooks recognise *our* service.

Health always answers 200 with ``"service": "workbench"`` while the process runs (the hooks
and ``workbench status`` find the service that way), and ``status`` says whether the store
can take writes: ``"ok"``, or ``"error"`` with a ``reason`` that says what to do (the database
file was deleted or replaced under the service: restart it). ``store.state`` adds the
transient case: ``"busy"`` while hook writes are being refused for a lock held elsewhere, and
``"not storing"`` (with ``status: "error"``) from a hook write the disk refused (full, I/O
error) until one gets through again: events are spooled meanwhile, never reported as stored.
It is a plain ``def`` (thread pool), so a write lock held elsewhere never delays it; its
reads need no lock in WAL mode.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from service.deps import InstanceIdDep, RuntimeDep
from service.runtime import Runtime
from workbench import __version__, spool
from workbench.api_models.health import Health, Readiness
from workbench.errors import WorkbenchError
from workbench.store import events, schema

router = APIRouter(prefix="/api", tags=["health"])

BUSY_REPORT_S = 10.0  # how long after a refused hook write health still says "busy"


@router.get("/health", response_model=Health, response_model_exclude_unset=True)
def health(runtime: RuntimeDep, instance_id: InstanceIdDep) -> dict[str, Any]:
    problem = runtime.store.problem() or _not_storing(runtime)
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
        "store": _store_state(runtime, problem),
        "version": __version__,
        "schemaVersion": version,
        "queue": queue,
        "queueDepth": queue.get("pending", 0) + queue.get("claimed", 0),
        "compressor": runtime.settings.active_compressor(),
        # The service's own environment decides the key, so only it can say (Settings.
        # compressor_choice): status and doctor print this line, never their own view.
        "compressorReason": runtime.settings.compressor_choice(),
        # The fallback chain: per provider, configured or why not, and its last error.
        "compressors": compressor_chain(runtime),
        "uptimeSeconds": round(runtime.uptime_s, 1),
        "pid": os.getpid(),
        "dataDir": str(runtime.settings.data_dir),
        # Which data dir this is (workbench/instance.py): clients compare it with their own.
        "instanceId": instance_id,
        "spool": spool.backlog(runtime.settings.spool_dir),
        # Settings problems, and a second stage configured without its model (i21-rerank).
        "warnings": [*runtime.settings.load_warnings, *_rerank_warnings(runtime)],
        # "paused" (with the reason) while settings.json cannot be read: nothing is captured.
        "capture": runtime.settings.capture_state(),
        # Semantic recall: "ready", or why not ("unavailable"/"disabled" → full text only).
        "embeddings": runtime.indexer.health() if runtime.indexer else {"state": "disabled"},
        # The embedding worker (a child process: pid, state) and the vectors still to add.
        "vectors": runtime.indexer.vectors_health() if runtime.indexer else {"state": "disabled"},
    }


def _rerank_warnings(runtime: Runtime) -> list[str]:
    from workbench.recall import rerank

    skipped = rerank.problem(runtime.settings)
    return [] if skipped is None else [skipped]


def compressor_chain(runtime: Runtime) -> list[dict[str, Any]]:
    """The chain in order: ``{name, configured, problem?, lastError, lastOkAt}`` each."""
    seen = {entry["name"]: entry for entry in runtime.worker.compressor_status()}
    chain = []
    for name in runtime.settings.compressor_names():
        problem = runtime.settings.provider_problem(name)
        entry: dict[str, Any] = {"name": name, "configured": problem is None}
        if problem is not None:
            entry["problem"] = problem
        entry["lastError"] = seen.get(name, {}).get("lastError")
        entry["lastOkAt"] = seen.get(name, {}).get("lastOkAt")
        chain.append(entry)
    return chain


def _not_storing(runtime: Runtime) -> str | None:
    fault = runtime.store_fault
    if fault is None:
        return None
    return (
        f"not storing: the last hook write failed on the disk or the file ({fault}). Hooks "
        "spool their events until a write gets through; free disk space or fix the data "
        "dir's permissions"
    )


def _store_state(runtime: Runtime, problem: str | None) -> dict[str, Any]:
    """``ok``, ``busy`` (a hook write gave up on the lock lately: transient, hooks spool),
    ``not storing`` (the disk refused the last hook write) or ``unavailable`` (the file is
    gone or unreadable: restart)."""
    if problem is not None:
        state = "not storing" if problem.startswith("not storing") else "unavailable"
        return {"state": state, "reason": problem}
    since = time.time() - runtime.store_busy_at
    if since < BUSY_REPORT_S:
        return {
            "state": "busy",
            "reason": (
                f"a hook write gave up waiting for the write lock {since:.1f} s ago: another "
                "process holds the database; hooks spool their events until it lets go"
            ),
        }
    return {"state": "ok"}


@router.get(
    "/readiness",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "not ready: the reason says why"}},
)
def readiness(runtime: RuntimeDep) -> JSONResponse:
    problem = runtime.store.problem() or _not_storing(runtime)
    running = runtime.worker.is_alive()
    ready = running and problem is None
    body: dict[str, Any] = {"ready": ready, "worker": "running" if running else "stopped"}
    if problem:
        body["reason"] = problem
    return JSONResponse(body, status_code=200 if ready else 503)
