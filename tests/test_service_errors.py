"""What the service refuses, and that a refusal never harms the store.

Body-level validation (malformed JSON, unknown fields, wrong types) runs in-process through
``TestClient(create_app(settings))`` with the lifespan; everything about sockets, sizes,
origins and processes runs against a real ``python -m service``. The tests that only send
requests the service refuses, or harmless writes that no other test counts, share one
module-scoped service (``shared_service``): a start-up each cost more than the test itself.
"""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bench.search_targets import rss_mb
from service.app import create_app
from service.http_protocol import HEAD_TIMEOUT_S
from tests.conftest import ROOT, Service, seeded_service
from workbench import instance
from workbench.settings import load_settings

SMALL_LIMIT = 2048


# ----- helpers --------------------------------------------------------------------------------
@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    settings = load_settings(data_dir)
    with TestClient(create_app(settings), base_url=settings.base_url) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def shared_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One real service for this file's origin, CORS, loopback and Host tests (issue 23).

    Each of them sends refused requests or a write no other test reads; the one that checks
    the store compares it before and after on this same service, so sharing loses nothing.
    Full text only, as the ``service`` fixture is (a module fixture runs before ``_clean_env``).
    """
    data = tmp_path_factory.mktemp("errors") / "data"
    data.mkdir()
    with seeded_service(data, lambda store: None, WORKBENCH_EMBEDDER="none") as svc:
        yield svc


def raw(
    svc: Service,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request with exact bytes; returns (status, lowercased headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return (response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        conn.close()


def store_state(data_dir: Path) -> tuple[dict[str, int], str]:
    """Row counts of every canonical table, and PRAGMA integrity_check."""
    conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        counts = {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in (
                "sessions",
                "user_prompts",
                "events",
                "queue",
                "observations",
                "session_summaries",
            )
        }
        return counts, conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def seed(svc: Service) -> None:
    """A little real data, so 'unchanged' means something."""
    svc.post("/api/sessions/init", {"contentSessionId": "s1", "project": "p", "prompt": "hi"})
    svc.post("/api/memory/save", {"text": "a memory"})


# ----- body validation (in-process) -----------------------------------------------------------
@pytest.mark.parametrize("body", [b"{not json", b'{"contentSessionId": "s1",', b"", b"[]", b"null"])
def test_malformed_json_body_is_a_422(client: TestClient, body: bytes) -> None:
    response = client.post(
        "/api/sessions/init", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "INVALID_REQUEST"
    assert client.get("/api/stats").json()["totals"]["events"] == 0


@pytest.mark.parametrize(
    "body",
    [b"\xff\xfe", b"\xff\xfe{\x00}\x00", b'{"prompt": "caf\xe9"}', b"{\x00}\x00"],
    ids=["utf-16 BOM alone", "utf-16-le", "latin-1", "utf-16-le without BOM"],
)
def test_a_body_that_is_not_utf8_is_a_415_naming_utf8(client: TestClient, body: bytes) -> None:
    """Issue 19, item 6 (the whole sweep is in test_hardening_privacy)."""
    response = client.post(
        "/api/sessions/init", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 415, response.text
    assert response.json()["error"] == "UNSUPPORTED_ENCODING"
    assert "send JSON encoded as UTF-8" in response.json()["message"]
    assert client.get("/api/stats").json()["totals"]["events"] == 0


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/api/sessions/init", {"contentSessionId": "s", "project": "p", "promt": "typo"}, "promt"),
        (
            "/api/sessions/observations",
            {"contentSessionId": "s", "tool_name": "Read", "toolInput": {}},
            "toolInput",
        ),
        (
            "/api/sessions/summarize",
            {"contentSessionId": "s", "lastAssistantMessage": "x"},
            "lastAssistantMessage",
        ),
        ("/api/sessions/end", {"contentSessionId": "s", "why": "x"}, "why"),
        ("/api/memory/save", {"text": "x", "tags": ["a"]}, "tags"),
        ("/api/observations/batch", {"ids": [1], "order": "asc"}, "order"),
    ],
)
def test_unknown_fields_are_a_422_naming_the_field(
    client: TestClient, route: str, body: dict[str, Any], field: str
) -> None:
    response = client.post(route, json=body)
    assert response.status_code == 422
    payload = response.json()
    assert [e["field"] for e in payload["errors"]] == [field]
    assert payload["errors"][0]["type"] == "extra_forbidden"
    assert payload["message"].startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/api/sessions/init", {"contentSessionId": ["s"], "project": "p"}, "contentSessionId"),
        ("/api/sessions/init", {"contentSessionId": "s", "project": 7}, "project"),
        ("/api/sessions/init", {"contentSessionId": "", "project": "p"}, "contentSessionId"),
        ("/api/sessions/init", {"contentSessionId": "s" * 201, "project": "p"}, "contentSessionId"),
        ("/api/sessions/init", {"project": "p"}, "contentSessionId"),
        ("/api/sessions/observations", {"contentSessionId": "s", "tool_name": None}, "tool_name"),
        (
            "/api/sessions/observations",
            {"contentSessionId": "s", "tool_name": "R", "cwd": {"a": 1}},
            "cwd",
        ),
        (
            "/api/sessions/summarize",
            {"contentSessionId": "s", "last_assistant_message": 3},
            "last_assistant_message",
        ),
        ("/api/memory/save", {"text": ""}, "text"),
        ("/api/memory/save", {"text": "x", "title": 5}, "title"),
        ("/api/queue/retry", {"eventIds": "all"}, "eventIds"),
    ],
)
def test_wrong_types_are_a_422_naming_the_field(
    client: TestClient, route: str, body: dict[str, Any], field: str
) -> None:
    response = client.post(route, json=body)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field
    assert client.get("/api/stats").json()["totals"]["events"] == 0


def test_unknown_route_is_a_404(client: TestClient) -> None:
    assert client.get("/api/nothing-here").status_code == 404


# ----- body size (real service) ---------------------------------------------------------------
def test_oversized_body_is_a_413_and_the_store_is_unharmed(make_service: Any) -> None:
    svc = make_service(WORKBENCH_MAX_BODY_BYTES=str(SMALL_LIMIT))
    seed(svc)
    before = store_state(svc.data_dir)

    status, body = svc.post("/api/memory/save", {"text": "x" * (SMALL_LIMIT * 2)})
    assert status == 413
    assert body["error"] == "BODY_TOO_LARGE"
    assert str(SMALL_LIMIT) in body["message"]
    assert "WORKBENCH_MAX_BODY_BYTES" in body["message"]
    status, _ = svc.post(
        "/api/sessions/observations",
        {
            "contentSessionId": "s1",
            "tool_name": "Read",
            "tool_response": "y" * SMALL_LIMIT,
        },
    )
    assert status == 413

    after = store_state(svc.data_dir)
    assert after == before
    assert after[1] == "ok"
    # A body under the limit still goes through.
    assert svc.post("/api/memory/save", {"text": "small"})[0] == 200


def test_a_url_past_the_parsers_limit_is_a_json_414_naming_its_longest_parameter(
    make_service: Any,
) -> None:
    """httptools refuses a URL over 65,535 bytes, and uvicorn answered that with a plain-text
    400 naming nothing (found by make fuzz: a search with two long filter values). The caller
    gets the service's JSON refusal instead, with the data dir's id, and the service goes on."""
    svc = make_service()
    seed(svc)
    before = store_state(svc.data_dir)
    long_value = urllib.parse.quote("<privé" * 6000, safe="")
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=30)
    try:
        conn.request("GET", f"/api/search?format=json&query=x&concepts={long_value}&limit=5")
        response = conn.getresponse()
        body = json.loads(response.read())
        assert response.status == 414, body
        assert response.getheader("X-Workbench-Instance") == instance.read(svc.data_dir)
    finally:
        conn.close()
    assert body["error"] == "URL_TOO_LONG"
    assert "65,535" in body["message"]
    assert "concepts" in body["message"]
    assert store_state(svc.data_dir) == before
    # The same value just under the limit is read and answered.
    status, reply = svc.get(f"/api/search?format=json&concepts={long_value[:60000]}")
    assert status == 200, reply


def endless_head(port: int, start: bytes, most: int) -> tuple[int, bytes]:
    """Send ``start`` and then more of it (a header value or a URL that never ends), 64 KiB
    at a time, up to ``most`` bytes; return how many were sent before the service stopped
    reading, and its reply."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(start)
            while sent < most:
                sock.sendall(b"a" * 65536)
                sent += 65536
        except OSError:  # the service answered and closed: the rest is not read
            pass
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except OSError:
            pass
    return sent, reply


@pytest.mark.parametrize(
    "start",
    [b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ", b"GET /api/search?query="],
    ids=["header", "url"],
)
def test_a_head_that_never_ends_is_a_json_431_and_the_service_stays_small(
    shared_service: Service, start: bytes
) -> None:
    """httptools sets no limit on a request's head: one connection sending an endless header
    (or request line) grew the service by ~1.6 MiB per MiB sent, 300 MiB took it from 89 to
    492 MiB. Past 128 KiB the service answers 431 (its JSON refusal, the data dir's id) and
    closes, and its memory stays where it was."""
    assert shared_service.proc is not None
    pid = shared_service.proc.pid
    before = rss_mb(pid)
    assert before > 0
    sent, reply = endless_head(shared_service.port, start, 64 << 20)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), (sent, reply[:300])
    assert f"x-workbench-instance: {instance.read(shared_service.data_dir)}".encode() in head
    refusal = json.loads(body)
    assert refusal["error"] == "HEAD_TOO_LARGE"
    assert "131,072" in refusal["message"]
    # It stopped reading: not all 64 MiB went out (what did sat in socket buffers, not in it).
    assert sent < 64 << 20
    assert 0 < rss_mb(pid) < before + 20
    assert shared_service.get("/api/health")[0] == 200


def read_to_end(sock: socket.socket) -> bytes:
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    return reply


def test_a_head_that_stalls_is_a_json_408_and_a_silent_connection_is_closed(
    shared_service: Service,
) -> None:
    """A connection that sent part of a head, or nothing, was held as long as its client
    liked: a thousand of them used up the service's file handles (health refused until they
    closed). Past ``HEAD_TIMEOUT_S`` the first gets a 408 and the second is closed; a head
    sent in two pieces a moment apart is still read."""
    port = shared_service.port
    start = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
    wait = HEAD_TIMEOUT_S + 30
    with (
        socket.create_connection(("127.0.0.1", port), timeout=wait) as partial,
        socket.create_connection(("127.0.0.1", port), timeout=wait) as silent,
        socket.create_connection(("127.0.0.1", port), timeout=wait) as slow,
    ):
        partial.sendall(start)
        slow.sendall(start)
        time.sleep(1)
        slow.sendall(b"Connection: close\r\n\r\n")
        assert read_to_end(slow).startswith(b"HTTP/1.1 200 ")
        reply = read_to_end(partial)
        assert read_to_end(silent) == b""
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), reply[:300]
    assert f"x-workbench-instance: {instance.read(shared_service.data_dir)}".encode() in head
    refusal = json.loads(body)
    assert refusal["error"] == "HEAD_TIMEOUT"
    assert shared_service.get("/api/health")[0] == 200


def test_a_large_head_under_the_limit_is_read(shared_service: Service) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", shared_service.port, timeout=30)
    try:
        conn.request("GET", "/api/health", headers={"X-Padding": "a" * 100_000})
        response = conn.getresponse()
        assert response.status == 200, response.read()
    finally:
        conn.close()


def test_declared_length_over_the_limit_is_refused_before_the_body(make_service: Any) -> None:
    svc = make_service(WORKBENCH_MAX_BODY_BYTES=str(SMALL_LIMIT))
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    try:
        conn.putrequest("POST", "/api/memory/save")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(10 * 1024 * 1024))
        conn.endheaders()
        conn.send(b'{"text": "')  # the rest never comes: the answer must not wait for it
        response = conn.getresponse()
        assert response.status == 413
        assert json.loads(response.read())["error"] == "BODY_TOO_LARGE"
    finally:
        conn.close()


def test_chunked_oversized_body_is_a_413(make_service: Any) -> None:
    svc = make_service(WORKBENCH_MAX_BODY_BYTES=str(SMALL_LIMIT))
    seed(svc)
    before = store_state(svc.data_dir)
    payload = json.dumps({"text": "z" * (SMALL_LIMIT * 4)}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    try:
        conn.putrequest("POST", "/api/memory/save")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        try:
            for start in range(0, len(payload), 512):
                chunk = payload[start : start + 512]
                conn.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            conn.send(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the service may answer and close before the last chunk: that is fine
        response = conn.getresponse()
        status, body = response.status, response.read()
    finally:
        conn.close()
    assert status == 413, body
    assert json.loads(body)["error"] == "BODY_TOO_LARGE"
    assert store_state(svc.data_dir) == before


def test_chunked_body_under_the_limit_is_accepted(make_service: Any) -> None:
    svc = make_service(WORKBENCH_MAX_BODY_BYTES=str(SMALL_LIMIT))
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    try:
        conn.request(
            "POST",
            "/api/memory/save",
            body=iter([b'{"text": ', b'"chunked"}']),
            headers={"Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = conn.getresponse()
        assert response.status == 200, response.read()
    finally:
        conn.close()


# ----- origins --------------------------------------------------------------------------------
def test_cross_origin_write_is_a_403_and_stores_nothing(shared_service: Service) -> None:
    shared_service.wait_idle()  # another test's allowed write is derived before counting
    before = store_state(shared_service.data_dir)
    evil = {"Origin": "http://evil.example"}
    for route, body in (
        ("/api/memory/save", {"text": "planted memory"}),
        ("/api/sessions/init", {"contentSessionId": "x", "project": "p", "prompt": "planted"}),
        ("/api/import", {"observations": [{"title": "planted"}]}),
    ):
        status, answer = shared_service.post(route, body, headers=evil)
        assert status == 403, route
        assert answer["error"] == "FOREIGN_ORIGIN"
        assert "http://evil.example" in answer["message"]
    # A "simple" form post needs no preflight; it is refused all the same.
    status, _, _ = raw(
        shared_service,
        "POST",
        "/api/memory/save",
        b"text=planted",
        {"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 403
    assert store_state(shared_service.data_dir) == before


@pytest.mark.parametrize(
    "origin",
    ["http://localhost.evil.example", "https://localhost:3000", "http://127.0.0.1.nip.io", "null"],
)
def test_lookalike_origins_are_refused(shared_service: Service, origin: str) -> None:
    status, _ = shared_service.post("/api/memory/save", {"text": "x"}, headers={"Origin": origin})
    assert status == 403


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]"])
def test_own_origin_writes_are_allowed(shared_service: Service, name: str) -> None:
    """Only the service's own origin, under any of its three spellings (issue 19, item 9)."""
    origin = f"http://{name}:{shared_service.port}"
    status, body = shared_service.post(
        "/api/memory/save", {"text": f"from {origin}"}, headers={"Origin": origin}
    )
    assert status == 200, body
    assert body["status"] == "stored"


def test_cors_preflight_from_evil_origin_gets_no_allow_origin(shared_service: Service) -> None:
    status, headers, _ = raw(
        shared_service,
        "OPTIONS",
        "/api/memory/save",
        headers={
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert status >= 400
    assert "access-control-allow-origin" not in headers
    _, headers, _ = raw(
        shared_service, "GET", "/api/stats", headers={"Origin": "http://evil.example"}
    )
    assert "access-control-allow-origin" not in headers


def test_cors_preflight_from_own_origin_is_allowed(shared_service: Service) -> None:
    own = f"http://localhost:{shared_service.port}"
    status, headers, _ = raw(
        shared_service,
        "OPTIONS",
        "/api/memory/save",
        headers={
            "Origin": own,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert status == 200
    assert headers["access-control-allow-origin"] == own


# ----- loopback only --------------------------------------------------------------------------
def _non_loopback_ipv4() -> str | None:
    """This machine's outward IPv4 address, if any (a UDP connect sends no packet)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # TEST-NET-1: connect only picks a route
            address = sock.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_service_is_not_reachable_on_a_non_loopback_address(shared_service: Service) -> None:
    address = _non_loopback_ipv4()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with pytest.raises((ConnectionRefusedError, TimeoutError)):
        socket.create_connection((address, shared_service.port), timeout=2).close()
    socket.create_connection(("127.0.0.1", shared_service.port), timeout=2).close()


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_service_listens_on_127_0_0_1_only(shared_service: Service) -> None:
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text(encoding="ascii").splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port = local.rsplit(":", 1)
            if state == "0A" and int(port, 16) == shared_service.port:  # 0A = LISTEN
                listening.append(address)
    assert listening == ["0100007F"]  # 127.0.0.1, little-endian hex; nothing on tcp6


# ----- one service per data dir ---------------------------------------------------------------
@pytest.mark.slow
def test_second_service_on_the_same_data_dir_exits(make_service: Any) -> None:
    first = make_service()
    second = make_service(start=False)  # its own free port: only the data dir is shared
    proc = subprocess.run(
        [sys.executable, "-m", "service"],
        env=second.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "already serves this data dir" in output
    assert str(first.get("/api/health")[1]["pid"]) in output
    # The first service is unharmed and still owns the PID file.
    status, health = first.get("/api/health")
    assert status == 200
    assert (first.data_dir / "service.pid").read_text(encoding="utf-8").strip() == str(
        health["pid"]
    )


@pytest.mark.slow
def test_a_stale_pid_file_does_not_block_a_restart(make_service: Any) -> None:
    first = make_service()
    first.kill9()  # leaves its PID file behind; the kernel dropped its lock
    assert (first.data_dir / "service.pid").exists()
    second = make_service()
    status, health = second.get("/api/health")
    assert status == 200
    assert (second.data_dir / "service.pid").read_text(encoding="utf-8").strip() == str(
        health["pid"]
    )


def test_a_foreign_host_header_is_refused(shared_service: Service) -> None:
    """DNS rebinding: a page whose hostname resolves to 127.0.0.1 must not read the API."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", shared_service.port, timeout=5)
    conn.request("GET", "/api/export", headers={"Host": f"evil.example:{shared_service.port}"})
    response = conn.getresponse()
    assert response.status == 403
    assert b"sessions" not in response.read()
    conn.close()
    status, _ = shared_service.get("/api/export")
    assert status == 200
