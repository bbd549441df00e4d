"""Sessions: the hook routes that write them, and ``GET /api/sessions`` (a page, newest first).

The hook routes (``POST /api/sessions/{init,observations,summarize,end}``) enqueue and
return: each answers in about a millisecond.

No SQLite call runs on the event loop. The routes are ``async def`` (parsing and validation
stay on the loop, where they are cheapest) and hand the one write transaction to the
runtime's small pool of hook writer threads (``Runtime.hook_writers``). A write that has to
wait (another process holds the database's write lock, or the worker is inside a slow
transaction) then blocks a writer thread, never ``/api/health`` or the other routes.

Each write waits at most ``HOOK_WRITE_WAIT_S`` for the lock (the in-process lock, then
SQLite's busy handler); past that the route answers 503 ``STORE_BUSY`` and the hook spools the
event, well inside the hook's 2 s budget; a full disk or an unwritable file is a 503
``STORE_UNAVAILABLE`` too. Measured with a keep-alive client (one at a time),
a dedicated executor costs ~0.1 ms a request over running on the loop; FastAPI's generic
thread pool (a plain ``def`` route) cost ~0.35 ms.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from typing import Any, Protocol

from fastapi import APIRouter

from service.deps import EventKeyDep, RuntimeDep
from service.pagination import PageDep, page
from service.runtime import Runtime
from service.schemas import SessionEnd, SessionInit, Summarize, ToolObservation
from workbench.api_models.ingest import IngestReply
from workbench.api_models.pages import Page
from workbench.errors import SpoolReplaying, StoreBusy, StoreUnavailable
from workbench.ingest import Ingestor, IngestResult
from workbench.models import Session
from workbench.store import sessions
from workbench.store.connection import is_store_fault, write_wait

router = APIRouter(prefix="/api/sessions", tags=["sessions"])

# Worst case a hook waits twice this (the in-process lock, then SQLite's busy handler) plus
# the request itself: under the hooks' 2 s total timeout with room to spare.
HOOK_WRITE_WAIT_S = 0.4


class _HookBody(Protocol):
    def ingest(self, ingestor: Ingestor, event_key: str | None) -> IngestResult: ...


def _ingest(body: _HookBody, runtime: Runtime, key: str | None) -> dict[str, Any]:
    """Runs on a hook writer thread (contextvars do not cross the hop: set the wait here).

    What hooks spooled earlier is stored first (``Runtime.replay_ahead``): a prompt spooled
    while the service was starting must not land after the tool calls it caused."""
    try:
        with write_wait(HOOK_WRITE_WAIT_S):
            runtime.replay_ahead()
            return body.ingest(runtime.ingestor, key).to_json()
    except sqlite3.Error as exc:
        if not is_store_fault(exc):
            raise
        # Trigger: the disk is full, or the file cannot be written. / Why: a bare 500 says
        # nothing; this is the store's state, not the event's. / Outcome: 503, the hook spools.
        raise StoreUnavailable(
            f"the database cannot take writes now ({exc}); nothing was stored. Hooks spool "
            "the event and the service replays it later; free disk space or check the data "
            "dir's permissions"
        ) from exc


async def _off_loop(runtime: Runtime, body: _HookBody, key: str | None) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    try:
        reply = await loop.run_in_executor(runtime.hook_writers, _ingest, body, runtime, key)
    except StoreBusy:
        runtime.store_busy_at = time.time()  # /api/health reports the store as busy a while
        runtime.replay_soon()  # the hook spools it: no later event may come to replay it
        raise
    except StoreUnavailable as exc:
        runtime.store_fault = exc.message  # /api/health says "not storing" until a write works
        runtime.replay_soon()
        raise
    except SpoolReplaying:
        runtime.replay_soon()
        raise
    runtime.store_fault = None
    return reply


@router.post("/init", response_model=IngestReply, response_model_exclude_unset=True)
async def init(body: SessionInit, runtime: RuntimeDep, key: EventKeyDep) -> dict[str, Any]:
    return await _off_loop(runtime, body, key)


@router.post("/observations", response_model=IngestReply, response_model_exclude_unset=True)
async def observation(
    body: ToolObservation, runtime: RuntimeDep, key: EventKeyDep
) -> dict[str, Any]:
    return await _off_loop(runtime, body, key)


@router.post("/summarize", response_model=IngestReply, response_model_exclude_unset=True)
async def summarize(body: Summarize, runtime: RuntimeDep, key: EventKeyDep) -> dict[str, Any]:
    return await _off_loop(runtime, body, key)


@router.post("/end", response_model=IngestReply, response_model_exclude_unset=True)
async def end(body: SessionEnd, runtime: RuntimeDep, key: EventKeyDep) -> dict[str, Any]:
    return await _off_loop(runtime, body, key)


@router.get("")
def list_sessions(runtime: RuntimeDep, params: PageDep) -> Page[Session]:
    """A page of sessions, newest first (plain ``def``: the read runs on the thread pool)."""
    items, more = sessions.list_sessions(
        runtime.store.conn,
        where=params.where("sessions"),
        offset=params.offset,
        limit=params.limit,
    )
    return page(items, more, params)
