"""An in-process event bus: what just happened in the store, for live clients (``/stream``).

Publishers run on any thread (the request loop, the worker); subscribers are asyncio queues
on the service's loop, fed with ``call_soon_threadsafe``. Each event carries a monotonically
increasing ``id`` so a client that reconnects can say what it last saw (SSE
``Last-Event-ID``) and the page can fill the gap from the paginated APIs.

A slow subscriber never blocks a publisher: its queue is bounded and, when full, the oldest
events are dropped for it and it is told with a ``lagged`` event to re-fetch.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import deque
from typing import Any

QUEUE_SIZE = 1000
RECENT = 500


class Bus:
    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]] = (
            set()
        )
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT)

    def publish(self, kind: str, data: dict[str, Any]) -> None:
        """Send one event to every subscriber (thread-safe, never blocks)."""
        with self._lock:
            event = {"id": next(self._ids), "event": kind, "data": data, "at": time.time()}
            self.recent.append(event)
            subscribers = list(self._subscribers)
        for loop, queue in subscribers:
            try:
                loop.call_soon_threadsafe(_offer, queue, event)
            except RuntimeError:  # that loop is closed: the subscriber is gone
                self.unsubscribe(loop, queue)

    def subscribe(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]:
        """A new subscriber on the running loop."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=QUEUE_SIZE)
        entry = (asyncio.get_running_loop(), queue)
        with self._lock:
            self._subscribers.add(entry)
        return entry

    def unsubscribe(
        self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[dict[str, Any]]
    ) -> None:
        with self._lock:
            self._subscribers.discard((loop, queue))

    def since(self, last_id: int) -> list[dict[str, Any]]:
        """Recent events after ``last_id`` (for a reconnecting client), oldest first."""
        with self._lock:
            return [e for e in self.recent if e["id"] > last_id]

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)


def _offer(queue: asyncio.Queue[dict[str, Any]], event: dict[str, Any]) -> None:
    if queue.full():
        try:
            queue.get_nowait()
        except asyncio.QueueEmpty:
            pass
        queue.put_nowait({"id": event["id"], "event": "lagged", "data": {}, "at": event["at"]})
        return
    queue.put_nowait(event)
