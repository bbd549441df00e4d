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

The ``fake_openai`` fixture (a plugin of ``tests/conftest.py``) starts one per test. The server
scaffolding (start/stop, ``base_url``, ``client()``, JSON in and out) is ``tests/fake_http.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.fake_http import FakeHTTPServer, QuietHandler, Scripted


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


class FakeOpenAI(FakeHTTPServer[Request, Scripted]):
    """The server, its script and its recordings."""

    name = "fake OpenAI"
    url_path = "/v1"

    def _client_class(self) -> Any:
        """A real ``openai.OpenAI`` (see ``FakeHTTPServer.client``)."""
        import openai

        return openai.OpenAI

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def queue_text(
        self,
        text: str | None,
        *,
        delay: float = 0.0,
        prompt_tokens: int = 10,
        completion_tokens: int = 5,
    ) -> None:
        self._script.append(
            Scripted(200, ("completion", text, prompt_tokens, completion_tokens), delay=delay)
        )

    def queue_error(self, status: int, body: Any, *, headers: dict[str, str] | None = None) -> None:
        self._script.append(Scripted(status, body, dict(headers or {})))

    def queue_raw(self, status: int, body: Any, *, headers: dict[str, str] | None = None) -> None:
        self._script.append(Scripted(status, body, dict(headers or {})))

    def _answer(self, request: Request) -> Scripted:
        with self._lock:
            self.requests.append(request)
            item = (
                self._script.popleft()
                if self._script
                else Scripted(200, ("completion", "OK", 10, 5))
            )
        if isinstance(item.body, tuple) and item.body[:1] == ("completion",):
            _, text, prompt, completion = item.body
            model = request.body.get("model", "local") if isinstance(request.body, dict) else ""
            body = completion_body(
                text, model=model, prompt_tokens=prompt, completion_tokens=completion
            )
            return Scripted(200, body, item.headers, item.delay)
        return item


def _make_handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class _Handler(QuietHandler):
        text_content_type = "text/html; charset=utf-8"

        def do_POST(self) -> None:
            _, body = self.read_body()
            request = Request(self.path, self.lower_headers(), body)
            if self.path.split("?", 1)[0] != "/v1/chat/completions":
                self.send_answer(Scripted(404, {"error": {"message": f"no route {self.path}"}}))
                return
            answer = fake._answer(request)
            fake._wait(answer.delay)
            self.send_answer(answer)

    return _Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI-compatible server for this test; stopped afterwards."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
