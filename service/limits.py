"""Pure-ASGI guards, cheap enough for the hook hot path.

- ``BodyLimit``: a request body over the limit gets a 413 before the route sees it, whether
  it declares a Content-Length or streams chunks. The store is never touched.
- ``LocalOriginOnly``: a state-changing request (POST, PUT, PATCH, DELETE) that carries an
  ``Origin`` other than http://localhost:* or http://127.0.0.1:* is refused with 403. CORS
  alone only hides responses from other sites; it does not stop a page from *sending* a write
  (a "simple" cross-origin POST needs no preflight). Hooks and the CLI send no Origin.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOCAL_ORIGIN = re.compile(r"^http://(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$")
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


async def _reject(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": code, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _TooLarge(BaseException):
    """Not an ``Exception``: FastAPI's body parsing catches those and answers 400, so the
    streamed (chunked) over-limit body would never reach ``BodyLimit`` as a 413."""


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        message = (
            f"request body is larger than {self.max_bytes} bytes; send less (large tool "
            "outputs are trimmed by the hooks) or raise WORKBENCH_MAX_BODY_BYTES"
        )
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await _reject(send, 413, "BODY_TOO_LARGE", message)
                return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            msg = await receive()
            if msg["type"] == "http.request":
                received += len(msg.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return msg

        async def tracking_send(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _reject(send, 413, "BODY_TOO_LARGE", message)


class LocalOriginOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in WRITE_METHODS:
            origin = _header(scope, b"origin")
            if origin is not None and not LOCAL_ORIGIN.match(origin):
                await _reject(
                    send,
                    403,
                    "FOREIGN_ORIGIN",
                    f"writes from origin {origin!r} are refused: the memory accepts changes "
                    "only from local pages (http://localhost or http://127.0.0.1)",
                )
                return
        await self.app(scope, receive, send)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None
