"""The HTTP edge of a real service (issue 9, items 11 and 12).

- Item 11: no HTML the service serves loads anything from another origin (``/docs`` and
  ``/redoc`` pulled Swagger UI / ReDoc from a CDN into this write-capable origin), and every
  HTML response carries the viewer's Content-Security-Policy; ``/openapi.json`` stays.
- Item 12: the GETs that write the injection ledger (``/api/context/*``) refuse a foreign
  ``Origin`` and a cross-site browser request without one (an ``<img>`` sends
  ``Sec-Fetch-Site: cross-site`` but no ``Origin``), write nothing when they refuse, and keep
  answering the hooks (no Origin, no Sec-Fetch-Site) and local pages.
"""

from __future__ import annotations

import http.client
import re
import sqlite3
from typing import Any

import pytest

from service.routes.viewer import CSP
from tests.conftest import Service, base_env, free_port, http_json

EVIL = "http://evil.example"
EXTERNAL_URL = re.compile(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", re.IGNORECASE)
LEDGER_GETS = [
    "/api/context/inject?projects=edge&contentSessionId=s-edge",
    "/api/context/file?path=/tmp/edge/a.py&cwd=/tmp/edge&contentSessionId=s-edge",
    "/api/context/prompt?query=how+does+the+edge+work&project=edge&contentSessionId=s-edge",
]


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One service for the whole module (a start costs seconds; nothing here changes state
    that another test reads, except the ledger counts, which each test takes relatively)."""
    data = tmp_path_factory.mktemp("edge") / "data"
    data.mkdir()
    port = free_port()
    svc = Service(data_dir=data, port=port, env=base_env(data, port, WORKBENCH_EMBEDDER="none"))
    yield svc.start()
    svc.stop()


def raw(svc: Service, method: str, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    conn.request(method, path, headers=headers)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def injection_count(svc: Service) -> int:
    conn = sqlite3.connect(f"file:{svc.data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM injections").fetchone()[0])
    finally:
        conn.close()


# ----- item 11: no third-party script, CSP on every HTML page ----------------------------------


def html_paths(svc: Service) -> list[str]:
    """Every GET path the app declares without a path parameter, plus the docs' own paths."""
    status, spec = http_json("GET", svc.url + "/openapi.json")
    assert status == 200, spec
    declared = [
        p
        for p, ops in spec["paths"].items()
        if "get" in ops and "{" not in p and p != "/stream"  # SSE: never ends, never HTML
    ]
    return sorted({*declared, "/", "/docs", "/redoc", "/docs/oauth2-redirect"})


def test_docs_pages_load_nothing_from_a_cdn(edge: Service) -> None:
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        status, headers, body = raw(edge, "GET", path)
        if status == 200:
            assert not EXTERNAL_URL.search(body.decode("utf-8", "replace")), path
            assert headers.get("content-security-policy") == CSP, path
        else:
            assert status == 404, (path, status)


def test_openapi_json_is_still_served(edge: Service) -> None:
    status, spec = http_json("GET", edge.url + "/openapi.json")
    assert status == 200
    assert "/api/health" in spec["paths"]


def test_every_html_response_has_the_csp_and_no_external_url(edge: Service) -> None:
    seen_html = []
    for path in html_paths(edge):
        status, headers, body = raw(edge, "GET", path)
        if "text/html" not in headers.get("content-type", ""):
            continue
        seen_html.append(path)
        assert headers.get("content-security-policy") == CSP, path
        assert not EXTERNAL_URL.search(body.decode("utf-8", "replace")), path
    assert "/" in seen_html  # the viewer page at least was checked


# ----- item 12: ledger-writing GETs refuse other sites -----------------------------------------


@pytest.mark.parametrize("path", LEDGER_GETS)
@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": EVIL},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "cross-site", "Referer": EVIL + "/page"},
        {"Origin": "http://localhost.evil.example:8000"},
        {"Origin": "http://localhost:3000"},
        {"Sec-Fetch-Site": "same-site"},
    ],
    ids=[
        "foreign-origin",
        "null-origin",
        "img-cross-site",
        "img-with-referer",
        "lookalike",
        "other-local-port",
        "img-same-site",
    ],
)
def test_ledger_gets_refuse_other_sites(edge: Service, path: str, headers: dict[str, str]):
    before = injection_count(edge)
    status, _, body = raw(edge, "GET", path, **headers)
    assert status == 403, body
    assert b"FOREIGN_ORIGIN" in body
    assert injection_count(edge) == before


def test_hooks_and_local_pages_still_get_the_session_block(edge: Service) -> None:
    path = LEDGER_GETS[0]
    before = injection_count(edge)
    for headers in (
        {},  # the hooks and the CLI: no Origin, no Sec-Fetch-Site
        {"Origin": f"http://127.0.0.1:{edge.port}", "Sec-Fetch-Site": "same-origin"},
        # the other spelling of the service's own origin is another *site* to the browser
        {"Origin": f"http://localhost:{edge.port}", "Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},  # typed in the address bar
    ):
        status, _, body = raw(edge, "GET", path, **headers)
        assert status == 200, (headers, body)
    assert injection_count(edge) == before + 5


def test_reads_from_another_site_are_refused_too(edge: Service) -> None:
    """A read leaks the memory (issue 19, item 9): refused like a write; the hooks' own read
    (no Origin, no Sec-Fetch-Site) still answers."""
    status, _, body = raw(edge, "GET", "/api/health", **{"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    assert b"FOREIGN_ORIGIN" in body
    assert raw(edge, "GET", "/api/health")[0] == 200


def test_a_write_without_origin_from_another_site_is_refused(edge: Service) -> None:
    status, _, body = raw(
        edge,
        "POST",
        "/api/observations/batch",
        **{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
    )
    assert status == 403, body
