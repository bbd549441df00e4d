"""Only the service's own origin reads or writes the memory (issue 19, item 9), over plain HTTP.

A page on another localhost port (``http://localhost:3000``, ``127.0.0.1:8888``,
``[::1]:5173``) used to read ``/api/export`` (CORS echoed its origin), write, and pass the
forget preflight. Now any request carrying an ``Origin`` other than the service's own
(``http://127.0.0.1:<port>``, ``http://localhost:<port>``, ``http://[::1]:<port>``) is a 403
whatever its method or path, a browser request without one (``Sec-Fetch-Site: same-site`` or
``cross-site``) is refused on the API, and a ``Host`` that is not one of those names with the
service's port is refused (DNS rebinding). Hooks, the CLI and MCP send no Origin and keep
working. The headless-browser side is tests/test_origin_browser.py.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Service, base_env, free_port
from workbench.client import ServiceClient
from workbench.settings import load_settings

OTHER_LOCAL_PAGES = ["http://localhost:3000", "http://127.0.0.1:8888", "http://[::1]:5173"]


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One service for the module, holding one memory (nothing here may change the store)."""
    data = tmp_path_factory.mktemp("origin") / "data"
    data.mkdir()
    port = free_port()
    running = Service(data_dir=data, port=port, env=base_env(data, port)).start()
    status, body = running.post("/api/memory/save", {"text": "the launch code is 0000"})
    assert status == 200, body
    yield running
    running.stop()


def raw(
    svc: Service, method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """One request with exactly these headers (``Host`` too, when given)."""
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        for key, value in headers.items():
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def store_rows(data_dir: Path) -> tuple[int, int, int]:
    """Observations, forgotten ones and events: what a refused request must leave unchanged."""
    conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return (
            conn.execute("SELECT count(*) FROM observations").fetchone()[0],
            conn.execute("SELECT count(*) FROM deleted_observations").fetchone()[0],
            conn.execute("SELECT count(*) FROM events").fetchone()[0],
        )
    finally:
        conn.close()


def own_origins(svc: Service) -> list[str]:
    return [f"http://{name}:{svc.port}" for name in ("127.0.0.1", "localhost", "[::1]")]


def foreign_origins(svc: Service) -> list[str]:
    return [
        *OTHER_LOCAL_PAGES,
        f"http://localhost:{svc.port + 1}",
        f"https://127.0.0.1:{svc.port}",  # another scheme is another origin
        f"http://127.0.0.1:{svc.port}.evil.example",
        f"http://localhost.evil.example:{svc.port}",
        "http://localhost",
        "http://evil.example",
        "null",  # a sandboxed iframe, a file:// page
    ]


def attempts(svc: Service) -> list[tuple[str, str, bytes | None, dict[str, str]]]:
    """What a page on another origin tries: read, stream, write, forget, preflight."""
    save = json.dumps({"text": "planted by another page"}).encode()
    return [
        ("GET", "/api/export", None, {}),
        ("GET", "/api/search?query=launch", None, {}),
        ("GET", "/api/health", None, {}),
        ("GET", "/stream", None, {"Accept": "text/event-stream"}),
        ("POST", "/api/memory/save", save, {"Content-Type": "application/json"}),
        ("POST", "/api/memory/save", save, {"Content-Type": "text/plain"}),  # no preflight
        ("DELETE", "/api/observation/1", None, {}),
        ("POST", "/api/observations/forget", b'{"ids": [1]}', {"Content-Type": "application/json"}),
        (
            "OPTIONS",
            "/api/observation/1",
            None,
            {"Access-Control-Request-Method": "DELETE"},
        ),
        (
            "OPTIONS",
            "/api/memory/save",
            None,
            {
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        ),
    ]


def test_every_request_from_another_origin_is_a_403_and_changes_nothing(svc: Service) -> None:
    before = store_rows(svc.data_dir)
    refused = 0
    for origin in foreign_origins(svc):
        for method, path, body, headers in attempts(svc):
            status, answer_headers, answer = raw(svc, method, path, body, Origin=origin, **headers)
            where = (origin, method, path)
            assert status == 403, (where, answer[:200])
            assert "access-control-allow-origin" not in answer_headers, where
            refusal = json.loads(answer)
            assert refusal["error"] == "FOREIGN_ORIGIN", where
            assert origin in refusal["message"], where
            assert f"http://127.0.0.1:{svc.port}" in refusal["message"], where
            refused += 1
    assert refused == len(foreign_origins(svc)) * len(attempts(svc))
    assert store_rows(svc.data_dir) == before


def test_the_services_own_origin_reads_writes_and_passes_preflight(svc: Service) -> None:
    """Each spelling of the service's own origin is the same service; CORS names it exactly
    (the viewer opened at localhost may call 127.0.0.1 and the other way round)."""
    for origin in own_origins(svc):
        status, headers, body = raw(svc, "GET", "/api/export", Origin=origin)
        assert status == 200, (origin, body[:200])
        assert headers["access-control-allow-origin"] == origin
        status, headers, _ = raw(
            svc,
            "OPTIONS",
            "/api/observation/1",
            Origin=origin,
            **{"Access-Control-Request-Method": "DELETE"},
        )
        assert status == 200, origin
        assert headers["access-control-allow-origin"] == origin
    before = store_rows(svc.data_dir)
    status, _, body = raw(
        svc,
        "POST",
        "/api/memory/save",
        json.dumps({"text": "saved from the viewer"}).encode(),
        Origin=own_origins(svc)[1],
        **{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"},
    )
    assert status == 200, body
    assert store_rows(svc.data_dir)[0] == before[0] + 1


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/api/export"), ("GET", "/stream"), ("POST", "/api/memory/save")],
)
def test_a_browser_request_without_origin_from_another_site_is_refused(
    svc: Service, site: str, method: str, path: str
) -> None:
    """A no-cors ``<img>``/``<script>`` load sends no Origin; ``localhost:3000`` and
    ``localhost:<port>`` are the *same site* (ports do not count), so both are refused."""
    before = store_rows(svc.data_dir)
    body = b'{"text": "planted"}' if method == "POST" else None
    status, _, answer = raw(svc, method, path, body, **{"Sec-Fetch-Site": site})
    assert status == 403, answer[:200]
    assert json.loads(answer)["error"] == "FOREIGN_ORIGIN"
    assert store_rows(svc.data_dir) == before


def test_the_viewer_page_opens_from_a_link_on_another_site(svc: Service) -> None:
    """A navigation to the page itself is harmless (its own scripts then call the API
    same-origin); only the API and the stream are closed to other sites."""
    for site in ("cross-site", "same-site", "none", "same-origin"):
        status, headers, _ = raw(
            svc, "GET", "/", **{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate"}
        )
        assert status == 200, site
        assert headers["content-type"].startswith("text/html")
    for site in ("same-origin", "none"):
        assert raw(svc, "GET", "/api/export", **{"Sec-Fetch-Site": site})[0] == 200, site


def test_the_host_must_name_this_service(svc: Service) -> None:
    """DNS rebinding: a page at ``http://evil.example:<port>`` whose name now resolves to
    127.0.0.1 is same-origin with itself, so the Host header is what gives it away."""
    port = svc.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LocalHost:{port}"):
        status, _, body = raw(svc, "GET", "/api/export", Host=host)
        assert status == 200, (host, body[:200])
    for host in (
        f"evil.example:{port}",
        f"127.0.0.1.nip.io:{port}",
        f"localhost.:{port}",
        f"127.0.0.2:{port}",
        f"localhost:{port + 1}",
        f"localhost:{port}0",
        "127.0.0.1",  # no port: port 80, not this service
        "localhost",
        f"[::1]:{port}@evil.example",
        "",
    ):
        status, _, body = raw(svc, "GET", "/api/export", Host=host)
        assert status == 403, (host, body[:200])
        refusal = json.loads(body)
        assert refusal["error"] == "FOREIGN_HOST", host
        assert f"127.0.0.1:{port}" in refusal["message"]
        assert b"launch code" not in body


def test_a_foreign_host_cannot_write_either(svc: Service) -> None:
    before = store_rows(svc.data_dir)
    status, _, _ = raw(
        svc,
        "POST",
        "/api/memory/save",
        b'{"text": "planted through a rebound name"}',
        Host=f"evil.example:{svc.port}",
        **{"Content-Type": "application/json"},
    )
    assert status == 403
    assert store_rows(svc.data_dir) == before


def test_hooks_and_the_client_send_an_acceptable_host(svc: Service) -> None:
    """The non-browser clients send no Origin and name 127.0.0.1:<port>: they still pass."""
    from hooks import _runtime

    reply = _runtime.request(svc.port, "GET", "/api/health")
    assert reply.status == 200
    client = ServiceClient(load_settings(svc.data_dir, port=svc.port))
    try:
        assert client.get("/api/health")["service"] == "workbench"
    finally:
        client.close()


def test_the_refusal_names_the_fix(svc: Service) -> None:
    status, _, body = raw(svc, "GET", "/api/export", Origin="http://localhost:3000")
    assert status == 403
    message: str = json.loads(body)["message"]
    assert "http://localhost:3000" in message
    assert f"http://localhost:{svc.port}" in message
