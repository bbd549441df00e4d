"""The scaffolding the fake provider servers share: a real local HTTP server on a thread.

Why one base: ``tests/fake_anthropic.py`` and ``tests/fake_openai.py`` are the same kind of
thing (STYLE 18: a server, not a mock) and differ only in the API they speak. Starting and
stopping the server, its port and ``base_url``, the real client pointed at it, the scripted
answer (``Scripted``), reading a JSON request and sending a JSON (or raw) answer live here
once; each fake keeps its own routes, scripts and response bodies.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

R = TypeVar("R")  # what a fake records of one request
S = TypeVar("S")  # what a fake's script holds


@dataclass
class Scripted:
    """One scripted answer: a status, a JSON (or raw) body, headers, an optional delay."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class FakeHTTPServer(Generic[R, S]):
    """Lifecycle and recordings of a fake server; subclasses give the handler and the client.

    Subclasses set ``name`` (the thread's name and the "received no request" message),
    ``url_path`` (what ``base_url`` adds after the port, e.g. ``"/v1"``), and implement
    ``_make_handler`` and ``_client_class``.
    """

    name = "fake-http"
    url_path = ""

    def __init__(self) -> None:
        self.requests: list[R] = []
        self._script: deque[S] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----- lifecycle ---------------------------------------------------------------------------
    def start(self) -> Self:
        server = _Server(("127.0.0.1", 0), self._make_handler())
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll: keep it short
            name=self.name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes any handler sleeping in a scripted delay
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the server first"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_path}"

    def client(self, **overrides: Any) -> Any:
        """A real SDK client pointed here: no retries, a short timeout."""
        options: dict[str, Any] = {
            "api_key": "test-key",
            "base_url": self.base_url,
            "max_retries": 0,
            "timeout": 5.0,
        }
        options.update(overrides)
        return self._client_class()(**options)

    @property
    def last_request(self) -> R:
        assert self.requests, f"the {self.name} server received no request"
        return self.requests[-1]

    # ----- for subclasses ----------------------------------------------------------------------
    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def _client_class(self) -> Any:
        raise NotImplementedError

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing, reads a JSON body and sends one answer per connection."""

    protocol_version = "HTTP/1.1"
    text_content_type = "text/plain; charset=utf-8"  # for a body that is not a dict or list
    extra_headers: dict[str, str] = {}  # sent with every answer, before the scripted ones

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep pytest output clean

    def read_body(self) -> tuple[bytes, Any]:
        """The raw request body and its parsed JSON (None when it is not JSON)."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return raw, body

    def lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def send_answer(self, answer: Scripted) -> None:
        """The body as JSON when a dict or list, else as is (bytes) or as text."""
        status, body, headers = answer.status, answer.body, answer.headers
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode("utf-8")
            content_type = "application/json"
        else:
            data = body if isinstance(body, bytes) else str(body or "").encode("utf-8")
            content_type = self.text_content_type
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for key, value in [*self.extra_headers.items(), *headers.items()]:
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping in a delay never blocks stop()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out has hung up before a delayed answer: expected, not news.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)
