"""The fuzz suite's real parts: one service per module, a raw HTTP client, a recording relay,
and the ledger that proves no accepted event was lost.

Why one service per module: starting ``python -m service`` costs seconds on a loaded machine,
and a fuzz run sends thousands of requests; the examples share it, and the checks below are
written so they hold whatever earlier examples did (they look up their own event ids).

"Never silently gone", precisely. An event offered to the service is *accounted for* when one
of these holds, checked per example and again at the end of the module:
- stored: the 2xx answer carries ``eventId`` and that row is in ``events`` (the append-only
  log; rows are never deleted, so a later check still finds it);
- skipped or a duplicate, with the ``reason`` the service stated in its 2xx answer;
- refused: a 4xx with a JSON error body (the client was told what was wrong), or a documented
  "not now" 5xx such as a 503 with its JSON message (a hook spools on those);
- spooled: the hook's idempotency key names a file in ``spool/``, ``spool/processed/`` or
  ``spool/rejected/`` under the hook's data dir.
Anything else (a 2xx without an event id or a reason, a 5xx with nothing spooled, a hook that
neither sent nor spooled the event it was given) fails the example.
"""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from hypothesis import settings as hypothesis_settings

from tests.conftest import Service, base_env, free_port
from tests.fuzz_strategies import Request

REQUEST_TIMEOUT_S = 30.0  # liveness, not speed: a route that never answers is a hang
SPOOL_FOLDERS = ("", "processed", "rejected")
# 5xx a route may answer on purpose, with a JSON ``{"error", "message"}`` body saying why
# (``WorkbenchError`` subclasses: no API key for the agent, no indexer, …). 500 never is.
DOCUMENTED_5XX = {501, 502, 503}


def budget(examples: int) -> int:
    """Scale an example count by the active profile: half of it in "ci" (``make test``), ten
    times it in "fuzz" (``make fuzz``)."""
    scale = hypothesis_settings().max_examples / 100
    return max(1, round(examples * scale))


class Peer:
    """A running ``Service`` behind a short repr: Hypothesis prints the fixtures of a failing
    example, and a dataclass's fields (the whole environment) would bury the report."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    def __repr__(self) -> str:
        return f"Service(port={self.service.port})"


def start_service(data_dir: Path, **extra: str) -> Service:
    """A real ``python -m service`` on ``data_dir`` (offline compressor, no embedding model)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = base_env(data_dir, port, WORKBENCH_EMBEDDER="none", **extra)
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR"):
        env.pop(key, None)
    service = Service(data_dir=data_dir, port=port, env=env).start(timeout=60)
    return Peer(service)  # type: ignore[return-value]  # duck-typed: every attribute delegates


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def send(port: int, request: Request, headers: dict[str, str] | None = None) -> Answer:
    """One request over a fresh connection; a streaming route is answered by its head only."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    try:
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(request.method, request.target, body=request.body, headers=all_headers)
        resp = conn.getresponse()
        kind = resp.getheader("content-type") or ""
        if kind.startswith("text/event-stream"):
            return Answer(resp.status, b"", kind)  # SSE never ends: the status is the answer
        return Answer(resp.status, resp.read(), kind)
    finally:
        conn.close()


def server_fault(answer: Answer) -> bool:
    """True for a 5xx that is not a documented, explained refusal."""
    if answer.status < 500:
        return False
    data = answer.json()
    explained = isinstance(data, dict) and bool(data.get("error")) and bool(data.get("message"))
    return not (answer.status in DOCUMENTED_5XX and explained)


def last_traceback(log: str) -> str:
    """The last traceback in a piece of service log (what the merger needs to find the bug)."""
    start = log.rfind("Traceback (most recent call last)")
    if start < 0:
        return ""
    lines = log[start:].splitlines()
    end = next(
        (i + 1 for i, line in enumerate(lines[1:], 1) if line and not line.startswith(" ")),
        len(lines),
    )
    return "\n".join(lines[:end])


def exception_name(traceback: str) -> str:
    """``UnicodeEncodeError`` from a traceback's final ``module.Name: message`` line."""
    last = traceback.strip().splitlines()[-1] if traceback.strip() else ""
    name = last.split(":", 1)[0].strip()
    return name.rsplit(".", 1)[-1] if name.replace(".", "").replace("_", "").isalnum() else "none"


def short(traceback: str, limit: int = 1500) -> str:
    """The last frames and the exception line: the end of a traceback says the most."""
    return traceback if len(traceback) <= limit else "…" + traceback[-limit:]


# ----- the store --------------------------------------------------------------------------------


def read_only(db_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def missing_events(db_path: Path, event_ids: list[int]) -> list[int]:
    """The ids in ``event_ids`` that have no row in the events log."""
    if not event_ids:
        return []
    with read_only(db_path) as conn:
        present = {row[0] for row in conn.execute("SELECT id FROM events")}
    return [i for i in event_ids if i not in present]


def integrity(db_path: Path) -> list[str]:
    with read_only(db_path) as conn:
        return [row[0] for row in conn.execute("PRAGMA integrity_check")]


def spooled_keys(root: Path) -> set[str]:
    """Idempotency keys of every envelope under ``root/spool`` (pending, processed, rejected)."""
    found = set()
    for folder in SPOOL_FOLDERS:
        path = root / "spool" / folder
        if path.is_dir():
            found |= {p.name.removesuffix(".json") for p in path.glob("*.json")}
    return found


@dataclass
class Ledger:
    """What the service accepted during a module, re-checked against the store at the end."""

    stored: dict[int, str] = field(default_factory=dict)  # event id → what sent it

    def record(self, origin: str, reply: tuple[int, Any]) -> None:
        """Account a ``Service.post`` reply that must have been stored (seed data)."""
        status, body = reply
        problem = self.account(origin, Answer(status, json.dumps(body).encode(), ""))
        assert problem is None, (origin, reply)
        assert isinstance(body.get("eventId"), int), (origin, reply)

    def account(self, origin: str, answer: Answer) -> str | None:
        """Classify one answer from an ingesting route; a message when it is not accounted."""
        if answer.status >= 300:
            explained = isinstance(answer.json(), dict)
            if explained and (400 <= answer.status < 500 or not server_fault(answer)):
                return None  # refused (or "not now", a documented 503), and told why
            return f"{answer.status} answer that is neither accepted nor an explained refusal"
        data = answer.json()
        if not isinstance(data, dict):
            return f"2xx answer that is not a JSON object: {answer.body[:200]!r}"
        event_id = data.get("eventId")
        if isinstance(event_id, int):
            self.stored[event_id] = origin
            return None
        if data.get("status") in {"skipped", "duplicate"} and data.get("reason"):
            return None
        return f"2xx answer with neither an eventId nor a stated reason: {data}"


# ----- a recording relay between hooks and the service ------------------------------------------


@dataclass
class Exchange:
    method: str
    path: str
    key: str | None
    body: bytes
    status: int | None  # None: the service gave no answer
    reply: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.reply)
        except ValueError:
            return None


class Relay:
    """A loopback HTTP server that forwards every request to the service and records both
    sides, so a test knows what each hook sent and what it was told (hooks speak raw HTTP)."""

    def __init__(self, upstream_port: int) -> None:
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one exchange per connection, then close

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in {"host", "connection", "content-length"}
                }
                status: int | None = None
                reply = b""
                kind = "application/json"
                whose = None  # the service's data dir id, relayed back (workbench/instance.py)
                try:
                    conn = http.client.HTTPConnection(
                        "127.0.0.1", upstream_port, timeout=REQUEST_TIMEOUT_S
                    )
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    status, reply = resp.status, resp.read()
                    kind = resp.getheader("content-type") or kind
                    whose = resp.getheader("X-Workbench-Instance")
                    conn.close()
                except OSError:
                    pass
                with relay._lock:
                    relay.exchanges.append(
                        Exchange(
                            self.command,
                            self.path.split("?", 1)[0],
                            self.headers.get("Idempotency-Key"),
                            body,
                            status,
                            reply,
                        )
                    )
                if status is None:
                    self.close_connection = True
                    return  # the hook sees the connection drop, as with a dead service
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(reply)))
                if whose is not None:
                    self.send_header("X-Workbench-Instance", whose)
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = do_PUT = do_DELETE = _forward

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def since(self, mark: int) -> list[Exchange]:
        with self._lock:
            return list(self.exchanges[mark:])

    def mark(self) -> int:
        with self._lock:
            return len(self.exchanges)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class scoped_env:
    """Set environment variables for one in-process hook run, then put them back."""

    def __init__(self, **values: str) -> None:
        self.values = values
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> scoped_env:
        for key, value in self.values.items():
            self.saved[key] = os.environ.get(key)
            os.environ[key] = value
        return self

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
