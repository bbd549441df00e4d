"""Fuzz the service's HTTP protocol (``service/http_protocol.py``).

- The over-long URL refusal: any bytes a client can put in a request line give a JSON body
  that names the longest parameter as sent, in ASCII, and never raise (the refusal is written
  from inside the HTTP parser's error path).
- The head limit, against a real service: a head of any shape (many small headers or a few
  long ones, a long URL, sent in pieces of any size) is read and answered while it is under
  the limit, refused with a JSON 431 once it is well past it, and the service goes on.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from service.http_protocol import (
    MAX_HEAD_BYTES,
    MAX_URL_BYTES,
    longest_parameter,
    url_too_long_body,
)
from tests.conftest import Service
from tests.fuzz_harness import budget, start_service

pytestmark = pytest.mark.slow

_url_bytes = st.binary(max_size=300).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))


@settings(max_examples=budget(200), deadline=None)
@given(path=_url_bytes, pairs=st.lists(_url_bytes, max_size=6))
@example(path=b"/api/search", pairs=[b"concepts=" + b"%3Cpriv" * 10_000, b"date_end=x"])
@example(path=b"/api/search", pairs=[])
@example(path=b"/", pairs=[b"", b"&", b"=", b"\xff\xfe=\x00"])
def test_the_refusal_is_json_naming_the_longest_parameter(path: bytes, pairs: list[bytes]) -> None:
    url = path.replace(b"?", b"") + (b"?" + b"&".join(pairs) if pairs else b"")
    body = json.loads(url_too_long_body(url))
    assert body["error"] == "URL_TOO_LONG"
    assert f"{MAX_URL_BYTES:,}" in body["message"]
    assert f"{len(url):,} bytes" in body["message"]
    found = longest_parameter(url)
    named = [p for p in b"&".join(pairs).split(b"&") if p]
    if not named:
        assert found is None
        return
    assert found is not None
    name, size = found
    assert size == max(len(p) for p in named)
    assert name.isascii()
    assert len(name) <= 64 * 4
    assert f"{name} ({size:,} bytes)" in body["message"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    svc = start_service(tmp_path_factory.mktemp("head") / "data")
    yield svc
    svc.stop()


READ_SLACK = 1 << 18  # the limit is checked after each read, and one read is at most 256 KiB


def exchange(port: int, head: bytes, piece: int) -> bytes:
    """Send ``head`` in pieces of ``piece`` bytes (stopping when the service closes), then
    read its reply to the end."""
    reply = b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            for start in range(0, len(head), piece):
                sock.sendall(head[start : start + piece])
        except OSError:  # answered and closed: it reads no more
            pass
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except OSError:
            pass
    return reply


@settings(max_examples=budget(30), deadline=None)
@given(
    headers=st.integers(0, 3000),
    value=st.integers(0, 8192),
    url=st.integers(0, 60_000),
    piece=st.sampled_from([1 << 10, 1 << 14, 1 << 16, 1 << 20]),
)
@example(headers=1, value=0, url=0, piece=1 << 16)
@example(headers=40, value=8192, url=60_000, piece=1 << 10)  # 388 KiB in 1 KiB pieces
def test_a_head_of_any_shape_is_answered_or_refused_by_its_size(
    service: Service, headers: int, value: int, url: int, piece: int
) -> None:
    lines = [
        b"GET /api/health?pad=" + b"u" * url + b" HTTP/1.1",
        b"Host: 127.0.0.1:%d" % service.port,
    ]
    lines += [b"X-Pad-%d: %s" % (i, b"v" * value) for i in range(headers)]
    lines += [b"Connection: close", b"", b""]
    head = b"\r\n".join(lines)
    reply = exchange(service.port, head, piece)
    status = reply[:12]
    if len(head) <= MAX_HEAD_BYTES:
        assert status == b"HTTP/1.1 200", (len(head), reply[:200])
    elif len(head) > MAX_HEAD_BYTES + READ_SLACK:
        assert status == b"HTTP/1.1 431", (len(head), reply[:200])
    else:
        assert status in (b"HTTP/1.1 200", b"HTTP/1.1 431"), (len(head), reply[:200])
    if status == b"HTTP/1.1 431":
        body = json.loads(reply.partition(b"\r\n\r\n")[2])
        assert body["error"] == "HEAD_TOO_LARGE"
    assert service.get("/api/health")[0] == 200
