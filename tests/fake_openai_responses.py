"""A real local HTTP server speaking OpenAI's Responses API (streaming), for the real Codex CLI.

Codex CLI talks to its model only through ``POST <base_url>/responses`` with ``"stream":
true`` and reads server-sent ``response.*`` events (openai/codex ``codex-rs/codex-api``'s SSE
reader: ``response.created``, ``response.output_item.added``/``.done``, text deltas,
``response.completed`` with usage). ``tests/test_real_codex.py`` points a ``[model_providers]``
entry of Codex's config.toml at this server (``base_url``, ``env_key``, ``wire_api =
"responses"``).

Answers come by RULE from the request, never from a fixed queue: Codex also makes side
requests (a thread title, compaction…), so the order of requests is not the script's order.
``rules`` is a list of functions of the recorded request; the first one that returns output
items answers; when none does, a plain text reply (``"OK"``). Helpers build the items:
``text_item``, ``function_call``. Every request is recorded in ``.requests`` (path,
lowercased headers, parsed JSON body), whatever the answer was; other routes (``GET
/models``…) answer 404, which Codex takes as "no remote model list".

The server scaffolding (start/stop, ``base_url``) is ``tests/fake_http.py``.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_http import FakeHTTPServer, QuietHandler, Scripted

Item = dict[str, Any]


@dataclass
class ResponsesRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None  # parsed JSON, or None
    at: float = field(default_factory=time.monotonic)  # when it arrived (bench figures)

    @property
    def input(self) -> list[Item]:
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    @property
    def instructions(self) -> str:
        text = self.body.get("instructions") if isinstance(self.body, dict) else None
        return text if isinstance(text, str) else ""

    @property
    def tools(self) -> list[Item]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []

    @property
    def tool_names(self) -> list[str]:
        """Every tool's name (a built-in one's ``type``: ``tool_search``, ``web_search``),
        and the names of the functions inside a namespace."""
        names: list[str] = []
        for tool in self.tools:
            name = tool.get("name", tool.get("type"))
            if isinstance(name, str):
                names.append(name)
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    names.append(inner["name"])
        return names

    @property
    def text(self) -> str:
        """Everything the model is shown as text: instructions and every input item, as JSON."""
        return self.instructions + "\n" + json.dumps(self.input, ensure_ascii=False)

    def user_texts(self) -> list[str]:
        """The text of each user message, oldest first."""
        out = []
        for item in self.input:
            if item.get("type", "message") == "message" and item.get("role") == "user":
                out.append(_content_text(item.get("content")))
        return out

    @property
    def last(self) -> Item:
        return self.input[-1] if self.input else {}

    def outputs(self) -> list[Item]:
        """The ``function_call_output`` items (the results of tool calls) in the input."""
        return [i for i in self.input if i.get("type") == "function_call_output"]


Rule = Callable[[ResponsesRequest], "list[Item] | None"]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def text_item(text: str) -> Item:
    """An assistant message with one ``output_text`` part."""
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any], call_id: str) -> Item:
    """A ``function_call`` item (``arguments`` is a JSON string on the wire)."""
    return {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments),
        "call_id": call_id,
    }


class FakeResponses(FakeHTTPServer[ResponsesRequest, Rule]):
    """The server, its rules and its recordings."""

    name = "fake OpenAI Responses"
    url_path = "/v1"

    def __init__(self) -> None:
        super().__init__()
        self.rules: list[Rule] = []
        self._ids = itertools.count(1)

    def _client_class(self) -> Any:
        import openai

        return openai.OpenAI

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def answer(self, request: ResponsesRequest) -> list[Item]:
        """Record ``request`` and pick its output items by the first rule that answers."""
        with self._lock:
            self.requests.append(request)
            rules = list(self.rules)
        for rule in rules:
            items = rule(request)
            if items is not None:
                return items
        return [text_item("OK")]

    def remember(self, request: ResponsesRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def responses(self) -> list[ResponsesRequest]:
        """The ``POST …/responses`` requests, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.path.split("?", 1)[0].endswith("/responses")]


def sse_events(items: list[Item], response_id: str, model: str) -> Iterator[Item]:
    """The ``response.*`` events that stream ``items`` as one completed response."""
    response = {"id": response_id, "object": "response", "model": model, "status": "in_progress"}
    yield {"type": "response.created", "response": {**response, "output": []}}
    for index, item in enumerate(items):
        item = {"id": f"{response_id}_item{index}", "status": "completed", **item}
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        if item["type"] == "message":
            text = _content_text(item.get("content"))
            yield {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "delta": text,
            }
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    done = {**response, "status": "completed", "output": items, "usage": usage}
    yield {"type": "response.completed", "response": done}


def _make_handler(fake: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class _Handler(QuietHandler):
        def do_GET(self) -> None:
            fake.remember(self._read())
            self._not_found()

        def do_POST(self) -> None:
            request = self._read()
            if not self.path.split("?", 1)[0].endswith("/responses"):
                fake.remember(request)
                self._not_found()
                return
            items = fake.answer(request)
            body = request.body if isinstance(request.body, dict) else {}
            response_id = f"resp_fake_{fake.next_id()}"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in sse_events(items, response_id, str(body.get("model") or "fake")):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

        def _read(self) -> ResponsesRequest:
            _, body = self.read_body()
            return ResponsesRequest(self.command, self.path, self.lower_headers(), body)

        def _not_found(self) -> None:
            self.send_answer(Scripted(404, {"error": {"message": f"no route {self.path}"}}))

    return _Handler
