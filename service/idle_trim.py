"""``IdleTrim``: once the service goes quiet after requests, give the heap's freed pages back.

Pure ASGI. A burst of concurrent requests (an agent's hooks, its MCP searches) runs on new
worker threads, and their query embeddings, candidate rows and SQLite page caches are freed
when they end, but glibc keeps the freed pages in the process: at 100k with full vectors the
service's RSS stayed ~17 MiB higher after each burst than after its warm-up, flat but never
given back (``bench/service_bursts.py``). ``heap_trim.trim_heap`` (``malloc_trim(0)``)
returns them.

It runs on the event loop, once per quiet spell: ``IDLE_S`` after the last request started
or ended, and only if a request ended since the last trim. A request still in flight does
not hold it off: the viewer's event stream stays open for hours, and ``malloc_trim`` is safe
beside running threads (it takes each arena's lock). A trim takes a few milliseconds; a
request that arrives during one waits that long, and a busy service never trims. A no-op off
glibc.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.recall.heap_trim import trim_heap

IDLE_S = 5.0


class IdleTrim:
    def __init__(
        self, app: ASGIApp, idle_s: float = IDLE_S, trim: Callable[[], object] = trim_heap
    ) -> None:
        self.app = app
        self.idle_s = idle_s
        self.trim = trim
        self.last_seen = 0.0  # when a request last started or ended (monotonic)
        self.pending = False  # a request ended since the last trim
        self.timer: asyncio.TimerHandle | None = None
        self.trims = 0  # how many ran

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.last_seen = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            self.last_seen = time.monotonic()
            self.pending = True
            if self.timer is None:
                self.timer = asyncio.get_running_loop().call_later(self.idle_s, self._check)

    def _check(self) -> None:
        """On the loop: trim if quiet for ``idle_s``, else look again when it could be."""
        self.timer = None
        if not self.pending:
            return
        quiet = time.monotonic() - self.last_seen
        if quiet < self.idle_s:
            wait = max(self.idle_s - quiet, 0.05)
            self.timer = asyncio.get_running_loop().call_later(wait, self._check)
            return
        self.pending = False
        self.trim()
        self.trims += 1
