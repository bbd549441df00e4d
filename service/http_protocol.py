"""The service's HTTP/1.1 protocol: uvicorn's httptools one, with a JSON 414 for a URL past the
parser's limit.

httptools refuses a URL longer than 65,535 bytes (``MAX_URL_LENGTH`` in its URL parser), and
uvicorn answers every parser error with a plain-text 400, "Invalid HTTP request received.",
which names nothing. A search with long filter values reaches that size (a non-ASCII
character is up to twelve bytes once percent-encoded), and the caller could not tell which
value to shorten. So a request whose URL is over the limit gets the service's one JSON
refusal instead (``service.limits.reject``'s shape): 414 ``URL_TOO_LONG``, with the URL's
length, the limit and the longest parameter, and the data dir's id header that every other
reply carries (``service.instance_guard``). Nothing reaches the app or the store.

A request's head (request line and headers) is bounded too. httptools sets no limit on it:
one connection sending a header, or a URL, that never ended grew the service by ~1.6 MiB for
each MiB sent (300 MiB took it from 89 to 492 MiB), and many such connections would take the
machine's memory. Past ``MAX_HEAD_BYTES`` (the longest URL the parser takes plus 64 KiB of
headers) the service answers 431 ``HEAD_TOO_LARGE`` and closes the connection, reading no
more. The count is of bytes received while a head is open, checked after each read, so a
connection holds at most the limit plus one read.

And in time: uvicorn closes a keep-alive connection idle between requests, but a connection
that sends nothing, or part of a head and then nothing, was held for as long as its client
liked; a thousand such (one process, a second's work) used up the service's file handles, and
health, hooks and the viewer were refused until they closed. A head must now be complete
within ``HEAD_TIMEOUT_S`` of the connection or of its first byte: past it, a 408
``HEAD_TIMEOUT`` (or, when nothing came at all, a plain close).

Every other parser error is answered as uvicorn answers it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from workbench.instance import HEADER

MAX_URL_BYTES = (1 << 16) - 1  # httptools' url_parser.pyx: MAX_URL_LENGTH
MAX_HEAD_BYTES = 1 << 17  # the longest URL, and 64 KiB of headers
# Hooks, the CLI, MCP and browsers send a head at once; a loaded machine may take a second.
HEAD_TIMEOUT_S = 10.0


def longest_parameter(url: bytes) -> tuple[str, int] | None:
    """The name (as sent, still percent-encoded, cut to 64 characters) and the byte length of
    the longest ``name=value`` pair in ``url``'s query string, or None when it has none."""
    _, mark, query = url.partition(b"?")
    if not mark:
        return None
    pairs = [pair for pair in query.split(b"&") if pair]
    if not pairs:
        return None
    pair = max(pairs, key=len)
    name = pair.partition(b"=")[0][:64].decode("latin-1")
    return name.encode("ascii", "backslashreplace").decode("ascii"), len(pair)


def url_too_long_body(url: bytes) -> bytes:
    message = (
        f"the request's URL is {len(url):,} bytes; the service reads at most {MAX_URL_BYTES:,}. "
    )
    longest = longest_parameter(url)
    if longest is not None:
        name, size = longest
        message += f"Its longest parameter is {name} ({size:,} bytes): shorten it."
    else:
        message += "Shorten it."
    return json.dumps({"error": "URL_TOO_LONG", "message": message}).encode("utf-8")


def head_too_large_body(received: int) -> bytes:
    message = (
        f"the request's head (its request line and headers) passed {received:,} bytes before "
        f"it ended; the service reads at most {MAX_HEAD_BYTES:,}. Send a shorter URL (a long "
        "value belongs in a POST body) or fewer and shorter headers."
    )
    return json.dumps({"error": "HEAD_TOO_LARGE", "message": message}).encode("utf-8")


def head_timeout_body() -> bytes:
    message = (
        f"the request's head (its request line and headers) did not end within "
        f"{HEAD_TIMEOUT_S:g} s; send it whole, at once"
    )
    return json.dumps({"error": "HEAD_TIMEOUT", "message": message}).encode("utf-8")


def protocol_for(instance_id: str) -> type[HttpToolsProtocol]:
    """The protocol class for ``uvicorn.run(http=...)``, stamping ``instance_id`` on the 414
    (uvicorn builds one protocol per connection from the class, with no room for arguments)."""
    stamp = instance_id.encode("latin-1")

    class WorkbenchHttpProtocol(HttpToolsProtocol):
        # Bytes received since the last message (or the connection) ended; None from the end
        # of a head to the end of its message (a body is BodyLimit's to bound).
        head_bytes: int | None = 0
        head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm_head_timer()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.arm_head_timer()

        def on_headers_complete(self) -> None:
            self.head_bytes = None
            self.disarm_head_timer()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self.head_bytes = 0

        def data_received(self, data: bytes) -> None:
            if self.head_bytes is not None:
                self.head_bytes += len(data)
            super().data_received(data)
            if (
                self.head_bytes is not None
                and self.head_bytes > MAX_HEAD_BYTES
                and not self.transport.is_closing()
            ):
                self.refuse(
                    b"431 Request Header Fields Too Large", head_too_large_body(self.head_bytes)
                )

        def arm_head_timer(self) -> None:
            self.disarm_head_timer()
            self.head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self.head_timed_out)

        def disarm_head_timer(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def head_timed_out(self) -> None:
            self.head_timer = None
            if self.transport.is_closing() or self.head_bytes is None:
                return
            if self.cycle is not None and not self.cycle.response_complete:
                # A pipelined head behind a reply still being written: a 408 now would cut
                # into that reply. Its own time starts when the reply is done.
                self.arm_head_timer()
                return
            if not self.head_bytes:  # nothing came: no request to answer
                self.transport.close()
                return
            self.refuse(b"408 Request Timeout", head_timeout_body())

        def send_400_response(self, msg: str) -> None:
            url: bytes = getattr(self, "url", b"")
            if len(url) <= MAX_URL_BYTES:
                super().send_400_response(msg)
                return
            self.refuse(b"414 URI Too Long", url_too_long_body(url))

        def refuse(self, status: bytes, body: bytes) -> None:
            """Answer with the service's JSON refusal and close: nothing more is read."""
            head: list[Any] = [b"HTTP/1.1 " + status + b"\r\n"]
            for name, value in self.server_state.default_headers:
                head.extend([name, b": ", value, b"\r\n"])
            head.extend(
                [
                    b"content-type: application/json\r\n",
                    b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                    HEADER.lower().encode("latin-1") + b": " + stamp + b"\r\n",
                    b"connection: close\r\n\r\n",
                    body,
                ]
            )
            self.transport.write(b"".join(head))
            self.transport.close()

    return WorkbenchHttpProtocol
