"""Pure-ASGI guards, cheap enough for the hook hot path.

- ``BodyLimit``: a request body over the limit gets a 413 before the route sees it, whether
  it declares a Content-Length or streams chunks. The store is never touched.
- ``LocalOriginOnly``: a state-changing request (POST, PUT, PATCH, DELETE, and the GETs
  under ``/api/context/`` that append to the injection ledger) is refused with 403 when it
  carries an ``Origin`` other than http://localhost:* or http://127.0.0.1:*, or, carrying
  no ``Origin``, a browser's ``Sec-Fetch-Site: cross-site`` (an ``<img src>`` on another
  site sends no Origin, but does send that). CORS alone only hides responses from other
  sites; it does not stop a page from *sending* a request (a "simple" cross-origin POST or
  GET needs no preflight). Hooks and the CLI send neither header, so they pass.
- ``HtmlSecurityHeaders``: every ``text/html`` response gets the viewer's security headers
  (its Content-Security-Policy above all) unless the route set its own, so no HTML page
  this write-capable origin serves can run a script from elsewhere.
"""

from __future__ import annotations

import json
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOCAL_ORIGIN = re.compile(r"^http://(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$")
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
# GETs that write: each /api/context/* reply is recorded in the injection ledger (ROI).
LEDGER_GET_PREFIXES = ("/api/context/",)


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
        if scope["type"] == "http" and _writes(scope):
            refusal = _foreign(scope)
            if refusal is not None:
                await _reject(
                    send,
                    403,
                    "FOREIGN_ORIGIN",
                    f"writes from {refusal} are refused: the memory accepts changes only "
                    "from local pages (http://localhost or http://127.0.0.1), the hooks "
                    "and the CLI",
                )
                return
        await self.app(scope, receive, send)


def _writes(scope: Scope) -> bool:
    method = scope["method"]
    if method in WRITE_METHODS:
        return True
    return method in ("GET", "HEAD") and str(scope.get("path", "")).startswith(LEDGER_GET_PREFIXES)


def _foreign(scope: Scope) -> str | None:
    """What marks the request as sent by another site, or None when it is local.

    Trigger: an Origin is present / Why: browsers send it on cross-origin fetches and on
    every POST / Outcome: it decides alone (a local page on another port is welcome).
    Trigger: no Origin / Why: a plain ``<img>`` or link sends none, but every current
    browser sends ``Sec-Fetch-Site`` / Outcome: ``cross-site`` is refused; a client that
    sends neither (hooks, CLI, curl) passes.
    """
    origin = _header(scope, b"origin")
    if origin is not None:
        return None if LOCAL_ORIGIN.match(origin) else f"origin {origin!r}"
    if (_header(scope, b"sec-fetch-site") or "").strip().lower() == "cross-site":
        return "another site (Sec-Fetch-Site: cross-site, no Origin)"
    return None


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


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None
