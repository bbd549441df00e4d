"""``TextBoundary``: the one place where request text is made storable and private-free.

Pure ASGI, innermost of the middlewares (it sees only requests the guards let through). For a
request that carries a body it reads the body once and looks at the *bytes*, cheaply:
substring tests and one regex that starts with a literal. Only a body that shows one of these
is parsed, cleaned and re-serialised; every other body passes untouched, so the hook hot path
pays a few scans of its bytes and nothing more.

- A lone UTF-16 surrogate (``"x \\ud83d"``: a tool output cut mid-emoji) cannot be encoded as
  UTF-8, so SQLite would answer 500. Rule: it becomes U+FFFD, in values and keys alike.
- ``NaN``, ``Infinity``, ``-Infinity`` (and a number too large for a float, ``1e400``, seen in
  a parsed body) are not JSON: the store's ``json_valid`` CHECK refuses them. Rule: refused
  with a 422 naming the field (``tool_input.t``), never normalised, because a silent null
  would change what the tool said. JSON nested deeper than ``MAX_DEPTH`` is refused the same
  way (every recursive step after us would fail on it with a 500). The hook routes' models
  refuse both again (``service.schemas``), which also covers spool replay and an overflowing
  literal or a deep body that nothing else made us parse.
- A stripped tag (``<private>``…, see ``workbench.redact``), written plainly or with escapes
  (``\\u003cprivate>``) or as HTML entities (``&lt;private&gt;``), is redacted from every
  string *and key* of the body, whatever the route: hook events, memory/save, import,
  settings, corpus bodies. The store-side code
  redacts again (defence in depth for in-process callers and old spool files).

- A body that is not UTF-8 is refused with a 415 naming UTF-8, before any route runs:
  UTF-16 and UTF-32 (with or without a byte-order mark: a NUL byte never appears in UTF-8
  JSON), Latin-1 and any other bytes that do not decode. JSON between systems is UTF-8
  (RFC 8259), and every scan here reads UTF-8 bytes: a UTF-16 ``<private>`` is not the bytes
  ``<private>``, so decoding it later (Starlette's ``json.loads`` detects UTF-16/32) carried
  private text past this boundary into the store. UTF-8 bytes that encode a lone surrogate
  (``ED A0 BD``, which ``json.loads`` reads with ``surrogatepass``) are still accepted, and
  cleaned like an escaped one. A UTF-8 byte-order mark is accepted and dropped (RFC 8259 lets
  a parser ignore it), so no route ever sees one.
- A body that needs cleaning and is large (``OFF_LOOP_BYTES``) is cleaned in a worker
  thread, so one big request never stalls the event loop every other request waits on.

The hook routes (``/api/sessions/*``, every tool call) scan only for surrogates: their models
refuse non-finite numbers and ``workbench.ingest`` redacts every field and key they store, so
the NaN and tag scans (each a pass over the bytes, ~1 µs per KB) are skipped there.

Query strings get the redaction too (``?query=%3Cprivate%3E…``), and so does the one header
we store (``Idempotency-Key``); a surrogate cannot arrive by URL or header, because
percent-decoding replaces undecodable bytes with U+FFFD and headers are latin-1, except
through a JSON array written in a query value (``projects=["\\ud83d"]``), which
``workbench.recall.filters.coerce_list`` cleans where it parses it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench import redact
from workbench.redact import STRIPPED_TAGS, may_hold_surrogates, redact_value

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
HOOK_PREFIX = "/api/sessions/"
UTF8_BOM = b"\xef\xbb\xbf"
# A body at least this large that needs cleaning is cleaned off the event loop (~1 ms of
# parsing and redaction per 10 KB of tag-dense JSON: larger would stall every other request).
OFF_LOOP_BYTES = 64 * 1024
_NAMES = "|".join(re.escape(t) for t in STRIPPED_TAGS).encode()
# A stripped tag's opener or closer as written, or as JSON escapes it (``\u003c``); an escape
# of any printable ASCII character also counts, because ``\u0070rivate`` would hide the name.
_TAG_BYTES = re.compile(rb"<\s*/?\s*(?i:" + _NAMES + rb")")
_ESCAPED_ASCII = re.compile(rb"\\u00[2-7][0-9a-fA-F]")
# One written with HTML entities (``&lt;private&gt;``, ``&#60;``, ``&amp;lt;``): Gemini CLI hands
# hook context back so (issue 20, item 10; ``workbench.redact.ESCAPED_LT``).
_ENTITY_TAG_BYTES = re.compile(rb"(?i:&(?:amp;)*(?:lt|#0*60|#x0*3c);)\\*/?(?i:" + _NAMES + rb")")
# What a query string holds when a value may hold a stripped tag: ``<`` (raw or ``%3C``), an
# entity's ``&`` (``%26``) or a JSON escape written out (``\u003c``).
_QUERY_TAG_HINTS = ("<", "%3c", "%26", "003")


MAX_DEPTH = redact.MAX_DEPTH  # the hooks elide past it; 2 frames per level stay safe


class UnfitJson(ValueError):
    """A value no route may store; ``field`` is its dotted path, the message says the fix."""

    def __init__(self, field: str, problem: str, kind: str) -> None:
        self.field = field
        self.kind = kind
        super().__init__(f"{field}: {problem}")


_NOT_FINITE = (
    "{value!r} is not a JSON number; send a finite number, or null when there is no value "
    "(NaN and Infinity are refused, not stored)"
)


def check_json(value: Any, path: str = "") -> None:
    """Raise ``UnfitJson`` for the first NaN/infinite number, or nesting over ``MAX_DEPTH``.

    Iterative on purpose: a recursive walk would itself fail (``RecursionError``, a 500) on
    the very input it must refuse. Paths are built only for containers, not for every leaf.
    """
    if isinstance(value, float) and not math.isfinite(value):  # the value itself, not inside
        raise UnfitJson(path or "body", _NOT_FINITE.format(value=value), "finite_number")
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, dict):
            pairs: Any = item.items()
        elif isinstance(item, list):
            pairs = enumerate(item)
        else:
            continue
        if depth >= MAX_DEPTH:
            start = ".".join(where.split(".")[:3]) if where else "body"  # not 128 segments
            raise UnfitJson(
                f"{start}…", f"nested deeper than {MAX_DEPTH} levels; flatten it", "too_deep"
            )
        for key, child in pairs:
            if isinstance(child, float) and not math.isfinite(child):
                raise UnfitJson(
                    f"{where}.{key}" if where else str(key),
                    _NOT_FINITE.format(value=child),
                    "finite_number",
                )
            if isinstance(child, dict | list):
                stack.append((child, f"{where}.{key}" if where else str(key), depth + 1))


def clean(value: Any) -> Any:
    """``value`` with lone surrogates replaced and stripped tags removed, keys included.

    Raises ``UnfitJson`` first for a NaN or infinite number or too deep a nesting (the rules
    above), so the recursive redaction never meets either.
    """
    check_json(value)
    return redact_value(value, surrogates=True)


def needs_cleaning(body: bytes, *, hook_route: bool = False) -> bool:
    """The cheap byte-level test: may this JSON body hold a surrogate, NaN or a stripped tag?

    ``hook_route``: only the surrogate test (see the module docstring for why).
    """
    if may_hold_surrogates(body):
        return True
    return not hook_route and (
        b"NaN" in body
        or b"Infinity" in body
        or (b"<" in body and _TAG_BYTES.search(body) is not None)
        or (b"&" in body and _ENTITY_TAG_BYTES.search(body) is not None)
        or (b"\\u00" in body and _ESCAPED_ASCII.search(body) is not None)
    )


def encoding_problem(body: bytes) -> str | None:
    """Why ``body`` is not UTF-8 text (the first offending byte and its offset), else None."""
    nul = body.find(b"\x00")
    if nul >= 0:
        return (
            f"byte {nul} is NUL, which UTF-8 JSON never holds: the body looks like UTF-16 or UTF-32"
        )
    if body.isascii():
        return None
    try:
        body.decode("utf-8", "surrogatepass")  # as json.loads reads bytes (see above)
    except UnicodeDecodeError as exc:
        return f"byte {exc.start} (0x{body[exc.start]:02x}) is not valid UTF-8"
    return None


def clean_body(body: bytes, *, hook_route: bool) -> bytes:
    """``body`` cleaned (re-serialised) when it needs it, else exactly as it was.

    Raises ``UnfitJson`` for what no route may store. A body that is not JSON passes as it
    is: the route answers its own 4xx.
    """
    if not needs_cleaning(body, hook_route=hook_route):
        return body
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return body
    return json.dumps(clean(value), ensure_ascii=False).encode("utf-8")


def clean_query(query: bytes) -> bytes:
    """A query string with stripped tags redacted from every name and value (else as is)."""
    text = query.decode("latin-1")
    lower = text.lower()
    if not any(hint in lower for hint in _QUERY_TAG_HINTS):
        return query
    pairs = parse_qsl(text, keep_blank_values=True)
    cleaned = [(redact_value(n), redact_value(v)) for n, v in pairs]
    if cleaned == pairs:  # no stripped tag after all: the query as it came
        return query
    return urlencode(cleaned).encode("latin-1")


def _redact_header(value: bytes) -> bytes:
    text: str = redact_value(value.decode("latin-1"))
    return text.encode("latin-1")


async def _reply_422(send: Send, field: str, message: str, kind: str) -> None:
    await _reply(
        send,
        422,
        {
            "error": "INVALID_REQUEST",
            "message": message,
            "errors": [{"field": field, "message": message, "type": kind}],
        },
    )


async def _reply_415(send: Send, problem: str) -> None:
    message = (
        f"the request body is not UTF-8: {problem}; send JSON encoded as UTF-8 (RFC 8259), "
        "e.g. json.dumps(body).encode('utf-8')"
    )
    await _reply(send, 415, {"error": "UNSUPPORTED_ENCODING", "message": message})


async def _reply(send: Send, status: int, document: dict[str, Any]) -> None:
    body = json.dumps(document).encode()
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


class TextBoundary:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("query_string"):
            # In place, on purpose: anything that reads the scope later (logs) sees it redacted.
            scope["query_string"] = clean_query(scope["query_string"])
        headers = scope.get("headers", [])
        if any(k == b"idempotency-key" and b"<" in v for k, v in headers):
            scope["headers"] = [
                (k, _redact_header(v) if k == b"idempotency-key" else v) for k, v in headers
            ]
        if scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before the body was complete
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        size = len(body)
        if body and (problem := encoding_problem(body)) is not None:
            await _reply_415(send, problem)
            return
        if body.startswith(UTF8_BOM):
            body = body[len(UTF8_BOM) :]
        received = body  # ``clean_body`` returns this very object when nothing changes
        hook_route = scope["path"].startswith(HOOK_PREFIX)
        try:
            if len(body) >= OFF_LOOP_BYTES:
                body = await anyio.to_thread.run_sync(
                    functools.partial(clean_body, body, hook_route=hook_route)
                )
            else:
                body = clean_body(body, hook_route=hook_route)
        except UnfitJson as exc:
            await _reply_422(send, exc.field, str(exc), exc.kind)
            return
        if body is not received or len(body) != size:
            scope = dict(scope)
            scope["headers"] = [
                (k, v) for k, v in scope.get("headers", []) if k != b"content-length"
            ] + [(b"content-length", str(len(body)).encode())]
        await self.app(scope, _replay(body, receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands over the buffered body once, then defers to the real one."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
