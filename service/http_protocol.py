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

Every other parser error is answered as uvicorn answers it.
"""

from __future__ import annotations

import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from workbench.instance import HEADER

MAX_URL_BYTES = (1 << 16) - 1  # httptools' url_parser.pyx: MAX_URL_LENGTH


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


def protocol_for(instance_id: str) -> type[HttpToolsProtocol]:
    """The protocol class for ``uvicorn.run(http=...)``, stamping ``instance_id`` on the 414
    (uvicorn builds one protocol per connection from the class, with no room for arguments)."""
    stamp = instance_id.encode("latin-1")

    class WorkbenchHttpProtocol(HttpToolsProtocol):
        def send_400_response(self, msg: str) -> None:
            url: bytes = getattr(self, "url", b"")
            if len(url) <= MAX_URL_BYTES:
                super().send_400_response(msg)
                return
            body = url_too_long_body(url)
            head: list[Any] = [b"HTTP/1.1 414 URI Too Long\r\n"]
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
