"""A real local HTTP server speaking the Anthropic Messages API, for tests that use the real client.

Why a server and not a mock: STYLE 18. The real ``anthropic`` client is pointed at it with
``base_url``, so every test exercises the client's own request building, response parsing and
error mapping, and survives changes in the HTTP library underneath it.

What it does:
- ``POST /v1/messages`` (and anything under it) answers from a scripted queue, first in first
  out; when the queue is empty it answers a minimal valid message (text ``"OK"``).
- Every request is recorded (method, path, lowercased headers, parsed JSON body) in
  ``.requests``, in arrival order, whatever the answer was.
- ``answer_by(rule)``: once the queue is empty, ``rule(request)`` gives the reply's content
  blocks (an agent CLI makes requests of its own: titles, tool discovery, one per tool result),
  so a scripted session follows from what each request says, not from arrival order.
- Scripted answers: ``queue_text`` (a text reply with chosen usage, including
  ``cache_creation_input_tokens`` / ``cache_read_input_tokens``), ``queue_message`` (any content
  blocks, e.g. ``tool_use``), ``queue_error`` (status + Anthropic error JSON
  ``{"type": "error", "error": {"type": …, "message": …}}``), ``queue_raw`` (any status and
  body), and ``queue_handler`` (a function of the request, for anything else). Each takes a
  ``delay`` (seconds) to exercise client timeouts.
- A request with ``"stream": true`` gets the same scripted message as server-sent events
  (``message_start`` … ``message_stop``), so streaming clients work unchanged.
- Other paths answer 404 with a ``not_found_error``.

Use the ``fake_anthropic`` fixture (registered as a plugin by ``tests/conftest.py``); it starts
one server per test and stops it afterwards. ``fake.client()`` builds a real client with
``max_retries=0`` and a short timeout. The server scaffolding (start/stop, ``base_url``,
``client()``, JSON in and out) is shared with ``tests/fake_openai.py`` in ``tests/fake_http.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.fake_http import FakeHTTPServer, QuietHandler, Scripted

DEFAULT_MODEL = "claude-haiku-4-5"


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any = None  # parsed JSON, or None when the body was not JSON

    @property
    def system_text(self) -> str:
        """The system prompt as one string (``system`` may be a string or text blocks)."""
        system = self.body.get("system", "") if isinstance(self.body, dict) else ""
        if isinstance(system, list):
            return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
        return system if isinstance(system, str) else ""

    @property
    def user_text(self) -> str:
        """All text of the user messages, joined."""
        messages = self.body.get("messages", []) if isinstance(self.body, dict) else []
        parts: list[str] = []
        for message in messages:
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(b.get("text", "") for b in content if isinstance(b, dict))
        return "\n".join(parts)


def tool_names(request: RecordedRequest) -> list[str]:
    """The names of the tools the request offers the model."""
    tools = request.body.get("tools") if isinstance(request.body, dict) else None
    return [t.get("name", "") for t in tools or [] if isinstance(t, dict)]


def result_text(block: dict[str, Any]) -> str:
    """A tool_result's text, whether its content is a string or text blocks."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return json.dumps(content)


def tool_results(request: RecordedRequest) -> dict[str, str]:
    """tool_use id -> the text of its tool_result, over every message of the request."""
    found: dict[str, str] = {}
    messages = request.body.get("messages") if isinstance(request.body, dict) else None
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[str(block.get("tool_use_id"))] = result_text(block)
    return found


Handler = Callable[[RecordedRequest], Scripted]
Rule = Callable[[RecordedRequest], list[dict[str, Any]]]  # a request -> the reply's content


def message_body(
    content: list[dict[str, Any]],
    *,
    model: str = DEFAULT_MODEL,
    stop_reason: str = "end_turn",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    message_id: str = "msg_fake",
) -> dict[str, Any]:
    """A complete Messages API response body."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": cache_creation_input_tokens,
            "cache_read_input_tokens": cache_read_input_tokens,
        },
    }


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The Anthropic error envelope."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


class FakeAnthropic(FakeHTTPServer[RecordedRequest, "Scripted | Handler"]):
    """The server, its script and its recordings."""

    name = "fake Anthropic"

    def __init__(self) -> None:
        super().__init__()
        self._count = 0
        self._rule: Rule | None = None

    def _client_class(self) -> Any:
        """A real ``anthropic.Anthropic`` (see ``FakeHTTPServer.client``)."""
        import anthropic

        return anthropic.Anthropic

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    # ----- scripting ---------------------------------------------------------------------------
    def queue_text(self, text: str, *, delay: float = 0.0, **usage: Any) -> None:
        """A text reply; ``usage`` takes ``input_tokens``, ``output_tokens``, cache counts…"""
        self.queue_message([{"type": "text", "text": text}], delay=delay, **usage)

    def queue_message(
        self, content: list[dict[str, Any]], *, delay: float = 0.0, **fields: Any
    ) -> None:
        """A reply with any content blocks (``text``, ``tool_use``…); see ``message_body``."""
        self._script.append(Scripted(200, ("message", content, fields), delay=delay))

    def queue_error(
        self,
        status: int,
        error_type: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """An HTTP error with the Anthropic error JSON."""
        self.queue_raw(status, error_body(error_type, message), headers=headers, delay=delay)

    def queue_raw(
        self,
        status: int,
        body: Any,
        *,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Any status and body (a dict/list is sent as JSON, str/bytes as is)."""
        self._script.append(Scripted(status, body, dict(headers or {}), delay))

    def queue_handler(self, handler: Handler) -> None:
        """A function that gets the recorded request and returns a ``Scripted`` answer."""
        self._script.append(handler)

    def answer_by(self, rule: Rule | None) -> None:
        """Answer every request the queue does not with ``rule(request)``'s content blocks.

        The reply's ``stop_reason`` is ``tool_use`` when the content has a ``tool_use`` block.
        """
        self._rule = rule

    @property
    def pending(self) -> int:
        """Scripted answers not used yet."""
        return len(self._script)

    # ----- serving -----------------------------------------------------------------------------
    def _remember(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _answer(self, request: RecordedRequest) -> Scripted:
        with self._lock:
            self.requests.append(request)
            self._count += 1
            number = self._count
            item = self._script.popleft() if self._script else None
            rule = self._rule
        if callable(item):
            return item(request)
        if item is None and rule is not None:
            content = rule(request)
            uses_tool = any(block.get("type") == "tool_use" for block in content)
            stop = {"stop_reason": "tool_use"} if uses_tool else {}
            item = Scripted(200, ("message", content, stop))
        if item is None:
            item = Scripted(200, ("message", [{"type": "text", "text": "OK"}], {}))
        if isinstance(item.body, tuple) and item.body[:1] == ("message",):
            _, content, fields = item.body
            model = request.body.get("model") if isinstance(request.body, dict) else None
            fields = {"model": model or DEFAULT_MODEL, "message_id": f"msg_fake_{number}", **fields}
            return Scripted(item.status, message_body(content, **fields), item.headers, item.delay)
        return item


def _make_handler(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class _Handler(QuietHandler):
        extra_headers = {"request-id": "req_fake"}

        def do_GET(self) -> None:
            fake._remember(self._read())
            self._not_found()

        def do_POST(self) -> None:
            request = self._read()
            if not self.path.split("?", 1)[0].startswith("/v1/messages"):
                fake._remember(request)
                self._not_found()
                return
            answer = fake._answer(request)
            fake._wait(answer.delay)
            wants_stream = isinstance(request.body, dict) and request.body.get("stream") is True
            if wants_stream and answer.status == 200 and _is_message(answer.body):
                self._send_stream(answer)
            else:
                self.send_answer(answer)

        def _read(self) -> RecordedRequest:
            raw, body = self.read_body()
            return RecordedRequest(
                method=self.command,
                path=self.path,
                headers=self.lower_headers(),
                raw=raw,
                body=body,
            )

        def _not_found(self) -> None:
            self.send_answer(Scripted(404, error_body("not_found_error", f"no route {self.path}")))

        def _send_stream(self, answer: Scripted) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            for key, value in answer.headers.items():
                self.send_header(key, value)
            self.end_headers()
            for event, data in sse_events(answer.body):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return _Handler


def _is_message(body: Any) -> bool:
    return isinstance(body, dict) and body.get("type") == "message"


def sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events that stream ``message`` (text and tool_use blocks)."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message.get("content") or []):
        if block.get("type") == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
        else:
            opening = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": opening,
            },
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        },
    )
    yield "message_stop", {"type": "message_stop"}


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running fake Anthropic server for this test; stopped afterwards."""
    with FakeAnthropic() as server:
        yield server
