"""Pure-ASGI guards, cheap enough for the hook hot path.

- ``BodyLimit``: a request body over the limit gets a 413 before the route sees it, whether
  it declares a Content-Length or streams chunks. The store is never touched.
- ``reject``: the one JSON refusal (``{"error": CODE, "message": ...}``) these guards and
  ``service.origin.OwnOriginOnly`` answer with, before the route or the store is touched.
- ``HtmlSecurityHeaders``: every ``text/html`` response gets the viewer's security headers
  (its Content-Security-Policy above all) unless the route set its own, so no HTML page
  this write-capable origin serves can run a script from elsewhere.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


async def reject(send: Send, status: int, code: str, message: str) -> None:
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
                await reject(send, 413, "BODY_TOO_LARGE", message)
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
                await reject(send, 413, "BODY_TOO_LARGE", message)


class HtmlSecurityHeaders:
    def __init__(self, app: ASGIApp, headers: dict[str, str]) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured_send(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                present = {bytes(k).lower() for k, _ in msg.get("headers", [])}
                content_type = b""
                for key, value in msg.get("headers", []):
                    if bytes(key).lower() == b"content-type":
                        content_type = bytes(value).lower()
                if content_type.startswith(b"text/html"):
                    extra = [(k, v) for k, v in self.headers if k not in present]
                    msg = {**msg, "headers": [*msg.get("headers", []), *extra]}
            await send(msg)

        await self.app(scope, receive, secured_send)
