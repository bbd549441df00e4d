"""``InstanceGuard``: say which data dir this service serves, and refuse what was meant for another.

Pure ASGI, outermost, so every reply (an error from another guard too) carries the data dir's
id as ``X-Workbench-Instance`` (``workbench.instance``): any client checks it for the price
of one header. A request that sends ``X-Workbench-Instance`` naming another id (or anything
that is not this id) is answered 421 before any route runs: a hook or CLI of another data
dir reached this port, and its write must not land in this memory. Requests without the
header pass (a browser, curl, an older client); they check the reply header themselves.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.instance import HEADER, WRONG_INSTANCE_STATUS

_HEADER_KEY = HEADER.lower().encode("latin-1")


class InstanceGuard:
    def __init__(self, app: ASGIApp, instance_id: str, data_dir: str, port: int) -> None:
        self.app = app
        self.instance_id = instance_id
        self._value = instance_id.encode("latin-1")
        self._where = f"data dir {data_dir} (port {port})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = [value for name, value in scope.get("headers", []) if name == _HEADER_KEY]
        if sent and any(value.strip() != self._value for value in sent):
            await self._refuse(send, sent[0])
            return

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0] != _HEADER_KEY]
                message = {**message, "headers": [*headers, (_HEADER_KEY, self._value)]}
            await send(message)

        await self.app(scope, receive, stamped)

    async def _refuse(self, send: Send, sent: bytes) -> None:
        shown = sent[:64].decode("latin-1").encode("ascii", "backslashreplace").decode("ascii")
        body = json.dumps(
            {
                "error": "WRONG_INSTANCE",
                "message": (
                    f"this workbench service serves {self._where}, id {self.instance_id}; "
                    f"the request is for the data dir with id {shown!r}. Give the two data "
                    "dirs different ports (settings.json `port` or WORKBENCH_PORT), or unset "
                    "them: each data dir then gets a port of its own"
                ),
                "instanceId": self.instance_id,
            }
        ).encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": WRONG_INSTANCE_STATUS,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (_HEADER_KEY, self._value),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
