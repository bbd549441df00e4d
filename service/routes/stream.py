"""``GET /stream``: Server-Sent Events of what the store just committed, for the live page.

Events: ``connected`` (first, always), then whatever the bus carries — ``session_started``,
``new_prompt``, ``queued``, ``new_observation``, ``new_summary``, ``session_completed``,
``processing_status`` (with ``queueDepth``), ``observation_deleted``, ``settings_changed``
and ``lagged`` (this client fell behind: re-fetch). ``data`` is always a JSON object.

Ids and reconnects. Each event's SSE id is ``<instance>.<n>``: ``n`` is the bus's counter and
``instance`` names this service process, because the counter restarts with the process and a
bare number from before a restart would silently skip events. A client that reconnects sends
``Last-Event-ID`` (``EventSource`` does it by itself; a new ``EventSource`` can pass
``?lastEventId=``) and gets the events it missed from ``bus.since()`` before the live ones:

- same instance, gap still in the bus's memory → ``connected.resumed = true``,
  ``complete = true``: the replay is exactly the gap;
- same instance but the gap is older than the bus remembers, or another instance (the
  service restarted) → ``complete = false``: everything this process still remembers is
  replayed, and the client should re-fetch its first page (the page does, and dedups).

We subscribe *before* reading the replay, so an event published in between is never lost;
one that shows up in both is sent once (ids only grow).

Heartbeats (an SSE comment every ``heartbeat`` seconds, default 15) keep idle proxies and the
browser from timing the stream out. sse-starlette ends open streams when uvicorn shuts down,
so a stream never holds a restart hostage.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from service.deps import RuntimeDep
from service.runtime import Runtime
from workbench.errors import WorkbenchError
from workbench.store import events

router = APIRouter(tags=["stream"])

HEARTBEAT_S = 15.0
RETRY_MS = 2000  # how soon a browser reconnects after the stream drops


def instance_of(runtime: Runtime) -> str:
    """This process's name in event ids: its start time in ms, hex (short, always growing)."""
    return format(int(runtime.started_at * 1000), "x")


def parse_last_event_id(value: str | None, instance: str) -> tuple[bool, int]:
    """``(same_instance, n)`` from a ``Last-Event-ID``; ``(False, 0)`` when absent or foreign."""
    if not value:
        return False, 0
    prefix, _, number = value.strip().rpartition(".")
    if prefix != instance or not (number.isascii() and number.isdigit()):  # not "¹"
        return False, 0
    return True, int(number)


def _payload(event: dict[str, Any]) -> dict[str, Any]:
    data = dict(event.get("data") or {})
    if event["event"] == "processing_status" and "queueDepth" not in data:
        queue = data.get("queue") or {}
        data["queueDepth"] = int(queue.get("pending", 0)) + int(queue.get("claimed", 0))
    return data


def to_sse(event: dict[str, Any], instance: str) -> ServerSentEvent:
    return ServerSentEvent(
        data=json.dumps(_payload(event), separators=(",", ":")),
        event=event["event"],
        id=f"{instance}.{event['id']}",
    )


@router.get(
    "/stream",
    response_class=EventSourceResponse,
    responses={
        200: {
            "description": "Server-Sent Events: ``connected``, then what the store commits",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def stream(
    request: Request,
    runtime: RuntimeDep,
    last_event_id: Annotated[
        str | None, Query(alias="lastEventId", max_length=100, description="resume after")
    ] = None,
    heartbeat: Annotated[float, Query(ge=1, le=120, description="seconds")] = HEARTBEAT_S,
) -> EventSourceResponse:
    """Live events; ``Last-Event-ID`` (header, or ``lastEventId``) replays the missed ones."""
    asked = request.headers.get("last-event-id") or last_event_id
    return EventSourceResponse(
        _events(runtime, asked),
        ping=heartbeat,
        headers={"Cache-Control": "no-store"},
    )


async def _events(runtime: Runtime, asked: str | None) -> AsyncIterator[ServerSentEvent]:
    """The stream of one client. Subscribing happens here, inside the generator, so the
    ``finally`` that unsubscribes is certain to run: a client that leaves before its first
    event never leaves a queue behind on the bus."""
    bus = runtime.bus
    instance = instance_of(runtime)
    same, after = parse_last_event_id(asked, instance)
    loop, queue = bus.subscribe()  # before reading the replay: nothing falls in between
    try:
        replay, complete, latest = _replay(bus.since(0), asked, same, after)
        # One aggregate for the status chip, on the thread pool: no SQLite call on the loop.
        depth = await run_in_threadpool(_queue_depth, runtime)
        hello = {
            "instance": instance,
            "lastEventId": f"{instance}.{latest}",
            "resumed": same,
            "complete": complete,
            "replayed": len(replay),
            "queue": depth,
            "queueDepth": depth["pending"] + depth["claimed"],
            "compressor": runtime.settings.active_compressor(),
        }
        # No id on ``connected``: it must not move the client's Last-Event-ID.
        yield ServerSentEvent(data=json.dumps(hello), event="connected", retry=RETRY_MS)
        sent = after if same else 0
        for event in replay:
            yield to_sse(event, instance)
            sent = event["id"]
        while True:
            event = await queue.get()
            if event["id"] <= sent and event["event"] != "lagged":
                continue  # already sent as part of the replay
            sent = max(sent, event["id"])
            yield to_sse(event, instance)
    finally:
        bus.unsubscribe(loop, queue)


def _queue_depth(runtime: Runtime) -> dict[str, int]:
    """The queue counts, or zeros when the store cannot be read (health says why)."""
    try:
        return events.depth(runtime.store.conn)
    except (sqlite3.Error, WorkbenchError):
        return {"pending": 0, "claimed": 0, "done": 0, "failed": 0}


def _replay(
    remembered: list[dict[str, Any]], asked: str | None, same: bool, after: int
) -> tuple[list[dict[str, Any]], bool, int]:
    """``(events to replay, whether they are the whole gap, the latest id)``."""
    latest = remembered[-1]["id"] if remembered else 0
    if asked is None:
        return [], True, latest  # a first connection: nothing was missed
    if not same:
        return remembered, False, latest  # another process: we cannot know what was missed
    replay = [e for e in remembered if e["id"] > after]
    oldest = remembered[0]["id"] if remembered else latest + 1
    return replay, after >= latest or oldest <= after + 1, latest
