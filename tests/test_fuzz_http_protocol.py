"""Fuzz the over-long URL refusal (``service/http_protocol.py``): any bytes a client can put in
a request line give a JSON body that names the longest parameter as sent, in ASCII, and
never raise (the refusal is written from inside the HTTP parser's error path)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from service.http_protocol import MAX_URL_BYTES, longest_parameter, url_too_long_body
from tests.fuzz_harness import budget

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
