"""The service sends nothing anywhere, even when the user's environment asks FastAPI to.

FastAPI (0.165) has OpenTelemetry built in: with ``FASTAPI_OTEL_AUTO_CONFIGURE=true`` and an
OTLP endpoint in the environment, and the SDK installed (``fastapi[standard]`` brings it), every
app exports a span per request, with the query string (a search's words: memory) as
``url.query``, plus request metrics and logs of validation failures. A user who set those
variables for their own apps would ship their agents' memory to that collector, because hooks
start the service with the user's environment. "No telemetry" (the brief) means none: the app
turns FastAPI's telemetry off itself.

The collector here is a real HTTP server on loopback that records what reaches it; the service,
the SDK and its exporter are real.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import free_port

CANARY = "zebracanary4711"


class _Collector(http.server.BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's handler name
        length = int(self.headers.get("Content-Length") or 0)
        self.received.append((self.path, self.rfile.read(length)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """A fake OTLP/HTTP collector (an outside service) on a loopback port: (url, received)."""
    received: list[tuple[str, bytes]] = []
    handler = type("Collector", (_Collector,), {"received": received})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def test_the_service_exports_no_telemetry_when_the_environment_asks_fastapi_to(
    make_service: Any, collector: tuple[str, list[tuple[str, bytes]]]
) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the dev extra installs fastapi[opentelemetry]")
    url, received = collector
    svc = make_service(
        FASTAPI_OTEL_AUTO_CONFIGURE="true",
        OTEL_EXPORTER_OTLP_ENDPOINT=url,
        OTEL_BSP_SCHEDULE_DELAY="50",  # spans, logs and metrics leave at once, not after 5 s
        OTEL_BLRP_SCHEDULE_DELAY="50",
        OTEL_METRIC_EXPORT_INTERVAL="200",
    )
    status, _ = svc.get(f"/api/search?query={CANARY}&mode=fts")
    assert status == 200
    status, _ = svc.get(f"/api/search?query={CANARY}&limit=-1")  # a validation failure: a log
    assert status == 422
    time.sleep(1.0)  # five export intervals
    svc.stop()  # the SDK flushes what it holds at exit
    log = svc.log_path.read_text(encoding="utf-8", errors="replace")
    assert not received, (
        f"the service exported {len(received)} OTLP request(s) to {url}: "
        f"{sorted({path for path, _ in received})}; the search words "
        f"{'were' if any(CANARY.encode() in body for _, body in received) else 'were not'} in them"
    )
    assert "telemetry" not in log.lower(), log
