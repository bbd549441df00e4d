"""A real local HTTP server speaking OpenAI's chat completions API, for the real ``openai`` client.

The twin of ``tests/fake_anthropic.py`` (STYLE 18: a server, not a mock): the real client is
pointed at it with ``base_url`` (``http://127.0.0.1:<port>/v1``), so tests exercise the
client's own request building, response parsing and error mapping, like Ollama, OpenRouter or
vLLM would.

- ``POST /v1/chat/completions`` answers from a scripted queue, first in first out; when empty,
  a minimal valid completion (text ``"OK"``). Every request is recorded in ``.requests``.
- ``queue_text`` (a completion with chosen usage), ``queue_error`` (status + the error body
  shape a provider sends: OpenAI's ``{"error": {"message", "type", "code"}}``, OpenRouter's
  ``{"error": {"code": 402, "message"}}``, Gemini's ``[{"error": {…}}]``…), ``queue_raw`` (any
  status and body, e.g. a proxy's HTML page). Each takes ``delay`` (seconds) and ``headers``.
- Other paths answer 404.

The ``fake_openai`` fixture (a plugin of ``tests/conftest.py``) starts one per test.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    def text_of(self, role: str) -> str:
        return "\n".join(m.get("content", "") for m in self.messages if m.get("role") == role)


def completion_body(
    text: str | None, *, model: str, prompt_tokens: int = 10, completion_tokens: int = 5
) -> dict[str, Any]:
    """A complete chat completion response body."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class FakeOpenAI:
    """The server, its script and its recordings."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._script: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeOpenAI:
        self._server = _Server(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def client(self, **overrides: Any) -> Any:
        """A real ``openai.OpenAI`` pointed here: no retries, a short timeout."""
        import openai

        options: dict[str, Any] = {
            "api_key": "test-key",
            "base_url": self.base_url,
            "max_retries": 0,
            "timeout": 5.0,
        }
        options.update(overrides)
        return openai.OpenAI(**options)

    def queue_text(
        self,
        text: str | None,
        *,
        delay: float = 0.0,
        prompt_tokens: int = 10,
        completion_tokens: int = 5,
    ) -> None:
        self._script.append(
            Answer(200, ("completion", text, prompt_tokens, completion_tokens), delay=delay)
        )

    def queue_error(self, status: int, body: Any, *, headers: dict[str, str] | None = None) -> None:
        self._script.append(Answer(status, body, dict(headers or {})))

    def queue_raw(self, status: int, body: Any, *, headers: dict[str, str] | None = None) -> None:
        self._script.append(Answer(status, body, dict(headers or {})))

    @property
    def last_request(self) -> Request:
        assert self.requests, "the fake OpenAI server received no request"
        return self.requests[-1]

    def _answer(self, request: Request) -> Answer:
        with self._lock:
            self.requests.append(request)
            item = (
                self._script.popleft() if self._script else Answer(200, ("completion", "OK", 10, 5))
            )
        if isinstance(item.body, tuple) and item.body[:1] == ("completion",):
            _, text, prompt, completion = item.body
            model = request.body.get("model", "local") if isinstance(request.body, dict) else ""
            body = completion_body(
                text, model=model, prompt_tokens=prompt, completion_tokens=completion
            )
            return Answer(200, body, item.headers, item.delay)
        return item


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def _make_handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            if self.path.split("?", 1)[0] != "/v1/chat/completions":
                self._send(Answer(404, {"error": {"message": f"no route {self.path}"}}))
                return
            answer = fake._answer(request)
            if answer.delay:
                fake._stopping.wait(answer.delay)
            self._send(answer)

        def _send(self, answer: Answer) -> None:
            if isinstance(answer.body, (dict, list)):
                data = json.dumps(answer.body).encode()
                content_type = "application/json"
            else:
                data = answer.body if isinstance(answer.body, bytes) else str(answer.body).encode()
                content_type = "text/html; charset=utf-8"
            self.send_response(answer.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for key, value in answer.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

    return _Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI-compatible server for this test; stopped afterwards."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
