"""``GET /stream`` against a real service, read by a real HTTP client (httpx, streaming).

What a live page depends on: an event arrives within a second of the store committing it (a
manual save and a hook observation derived by the worker), ``Last-Event-ID`` replays exactly
the missed events (and says when it cannot, after a restart), heartbeats flow on an idle
stream, and an open stream never holds up a service shutdown.
"""

from __future__ import annotations

import json
import queue
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import FIXTURES, Service, http_json

EDIT = json.loads((FIXTURES / "hooks" / "post_tool_use_edit.json").read_text())


class SSEClient:
    """A minimal Server-Sent Events reader on its own thread (events and comments queued)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.comments: queue.Queue[str] = queue.Queue()
        self._client = httpx.Client(timeout=httpx.Timeout(5.0, read=None))
        self._stream = self._client.stream("GET", url, headers=headers or {})
        self.response = self._stream.__enter__()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        event: dict[str, Any] = {}
        try:
            for line in self.response.iter_lines():
                if line == "":
                    if event:
                        if "data" in event:
                            event["data"] = json.loads(event["data"])
                        self.events.put(event)
                    event = {}
                elif line.startswith(":"):
                    self.comments.put(line)
                else:
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if name == "data" and "data" in event:
                        event["data"] += "\n" + value
                    else:
                        event[name] = value
        except (httpx.HTTPError, RuntimeError, ValueError):
            pass  # closed by the test, or the service went away

    def next(self, kind: str | None = None, timeout: float = 60.0) -> dict[str, Any]:
        """The next event (of ``kind``, skipping others) within ``timeout`` seconds: a limit
        for a loaded machine, not a speed; how fast events arrive is in bench/worst_cases.py."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind or 'event'} within {timeout}s")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if kind is None or event.get("event") == kind:
                return event

    def drain(self, wait: float = 0.3) -> list[dict[str, Any]]:
        """Every event that arrives within ``wait`` seconds."""
        time.sleep(wait)
        out = []
        while not self.events.empty():
            out.append(self.events.get_nowait())
        return out

    def close(self) -> None:
        try:
            self._stream.__exit__(None, None, None)
        finally:
            self._client.close()
        # A close from this thread does not wake a recv blocked in the reader (it is a daemon
        # and ends with the next byte or the service): do not wait for it.
        self._thread.join(0.1)


@pytest.fixture
def sse(service: Service) -> Iterator[Any]:
    """Factory: ``sse(**headers)`` opens a stream on the test's service; all are closed."""
    opened: list[SSEClient] = []

    def open_stream(path: str = "/stream", **headers: str) -> SSEClient:
        client = SSEClient(service.url + path, headers)
        opened.append(client)
        return client

    yield open_stream
    for client in opened:
        client.close()


def save(svc: Service, text: str, project: str = "stream-tests") -> int:
    status, body = svc.post("/api/memory/save", {"text": text, "project": project})
    assert status == 200, body
    return int(body["id"])


def test_stream_says_connected_first_with_the_queue_and_a_retry_hint(service: Service, sse):
    client = sse()
    assert client.response.status_code == 200
    assert client.response.headers["content-type"].startswith("text/event-stream")
    hello = client.next()
    assert hello["event"] == "connected"
    assert "id" not in hello  # connected must not move the client's Last-Event-ID
    assert hello["retry"] == "2000"
    data = hello["data"]
    assert data["resumed"] is False
    assert data["complete"] is True
    assert data["queueDepth"] == 0
    assert data["queue"]["pending"] == 0
    assert data["compressor"] == "offline"


def test_a_saved_memory_reaches_the_stream(service: Service, sse):
    client = sse()
    client.next("connected")
    obs_id = save(service, "the stream carries this memory")
    event = client.next("new_observation")
    assert event["data"] == {"id": obs_id, "project": "stream-tests"}
    instance, _, number = event["id"].rpartition(".")
    assert instance
    assert number.isdigit()


def test_a_hook_observation_reaches_the_stream_once_the_worker_stored_it(service: Service, sse):
    client = sse()
    client.next("connected")
    sid = "stream-session-1"
    status, _ = service.post(
        "/api/sessions/init",
        {"contentSessionId": sid, "project": "acme-api", "prompt": "fix the token expiry check"},
    )
    assert status == 200
    status, queued = service.post(
        "/api/sessions/observations",
        {
            "contentSessionId": sid,
            "tool_name": EDIT["tool_name"],
            "tool_input": EDIT["tool_input"],
            "tool_response": EDIT["tool_response"],
            "cwd": EDIT["cwd"],
        },
    )
    assert status == 200
    assert queued["status"] == "queued"
    event = client.next("new_observation")
    assert event["data"]["eventId"] == queued["eventId"]
    status, obs = service.get(f"/api/observation/{event['data']['id']}")
    assert status == 200
    assert obs["project"] == "acme-api"
    status_event = client.next("processing_status")
    assert status_event["data"]["queueDepth"] == 0
    # The live status carries the backlog only (counting done events would scan history).
    assert status_event["data"]["queue"] == {"pending": 0, "claimed": 0}


@pytest.mark.slow
def test_last_event_id_replays_exactly_the_missed_events(service: Service, sse):
    first = sse()
    first.next("connected")
    seen = save(service, "seen before the disconnect")
    last_id = first.next("new_observation")["id"]
    first.close()

    missed = [save(service, f"missed while away {n}") for n in range(3)]
    again = sse(**{"Last-Event-ID": last_id})
    hello = again.next("connected")
    assert hello["data"]["resumed"] is True
    assert hello["data"]["complete"] is True
    assert hello["data"]["replayed"] == 3
    replayed = [again.next("new_observation")["data"]["id"] for _ in missed]
    assert replayed == missed
    live = save(service, "live after the reconnect")
    assert again.next("new_observation")["data"]["id"] == live
    rest = [e for e in again.drain() if e.get("event") == "new_observation"]
    assert rest == []  # nothing twice
    assert seen not in replayed


def test_last_event_id_as_a_query_parameter_for_a_new_event_source(service: Service, sse):
    first = sse()
    first.next("connected")
    save(service, "one")
    last_id = first.next("new_observation")["id"]
    missed = save(service, "two")
    again = sse(f"/stream?lastEventId={last_id}")
    assert again.next("connected")["data"]["resumed"] is True
    assert again.next("new_observation")["data"]["id"] == missed


def test_an_id_from_another_process_replays_all_this_one_remembers(service: Service, sse):
    first = sse()
    first.next("connected")
    obs_id = save(service, "remembered by this process")
    client = sse(**{"Last-Event-ID": "deadbeef.42"})
    hello = client.next("connected")
    assert hello["data"]["resumed"] is False
    assert hello["data"]["complete"] is False  # the page must re-fetch its first page
    assert client.next("new_observation")["data"]["id"] == obs_id


@pytest.mark.slow
def test_a_restart_is_reported_as_an_incomplete_gap(make_service):
    svc = make_service()
    client = SSEClient(svc.url + "/stream")
    try:
        client.next("connected")
        save(svc, "before the restart")
        last_id = client.next("new_observation")["id"]
    finally:
        client.close()
    svc.stop()
    again_svc = make_service(port=svc.port)
    after = save(again_svc, "after the restart")
    again = SSEClient(again_svc.url + "/stream", {"Last-Event-ID": last_id})
    try:
        hello = again.next("connected")
        assert hello["data"]["resumed"] is False
        assert hello["data"]["complete"] is False
        assert again.next("new_observation")["data"]["id"] == after
    finally:
        again.close()


def test_deletions_and_settings_changes_are_streamed(service: Service, sse):
    client = sse()
    client.next("connected")
    obs_id = save(service, "to be deleted")
    client.next("new_observation")
    status, _ = service.get(f"/api/observation/{obs_id}")
    assert status == 200
    status, _ = _request(service, "DELETE", f"/api/observation/{obs_id}")
    assert status == 200
    assert client.next("observation_deleted")["data"] == {"id": obs_id, "project": "stream-tests"}
    status, _ = _request(service, "PUT", "/api/settings", {"context_summaries": 4})
    assert status == 200
    assert client.next("settings_changed")["data"] == {"keys": ["context_summaries"]}


@pytest.mark.slow
def test_heartbeats_keep_an_idle_stream_alive(service: Service, sse):
    client = sse("/stream?heartbeat=1")
    client.next("connected")
    comment = client.comments.get(timeout=60)
    assert comment.startswith(": ping")


def test_an_open_stream_does_not_hold_up_shutdown(service: Service, sse):
    client = sse()
    client.next("connected")
    assert service.proc is not None
    service.proc.terminate()
    # Held up, uvicorn would wait for the stream to close: for ever, so this wait would time out
    # (60 s is a limit for a loaded machine; the shutdown's wall time is in bench/worst_cases.py).
    # uvicorn re-raises the SIGTERM it handled once it has shut down.
    assert service.proc.wait(timeout=60) in (0, -signal.SIGTERM)


def _request(svc: Service, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return http_json(method, svc.url + path, body)
