"""A page on another localhost port cannot read or write the memory, in headless Chromium
(issue 19, item 9).

The attacker is a real page, served by a tiny ``http.server`` on another loopback port
(``localhost``, ``127.0.0.1`` and ``[::1]`` spellings), whose script does what a hostile
local dev server could: read ``/api/export`` and ``/api/search``, save a memory (JSON with a
preflight, and a ``no-cors`` ``text/plain`` POST that needs none), forget an observation
(``DELETE``, preflighted), post a ``text/plain`` form into a hidden frame, and open the SSE
stream. Every read must fail in the page and the store must be unchanged. The viewer served
by the service itself keeps working under both spellings of its own origin (the rest of the
viewer is tests/test_viewer_browser.py).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import Service, base_env, free_port
from tests.test_hardening_origin import store_rows
from tests.viewer_page import CHROMIUM, MISSING, launch_browser, live_page

pytestmark = pytest.mark.slow

if not CHROMIUM.exists():
    pytest.skip(MISSING, allow_module_level=True)
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SECRET = "the vault combination is 31-41-59"
PAGE = b"<!doctype html><title>some local dev server</title><p>hello</p>"

# Runs inside the attacker's page: each attempt reports what the page could see.
ATTACK = """
async (svc) => {
  const out = {};
  const attempt = async (name, run) => {
    try { out[name] = await run(); } catch (e) { out[name] = 'blocked: ' + e.name; }
  };
  await attempt('export', async () => (await fetch(svc + '/api/export')).text());
  await attempt('search', async () =>
    (await fetch(svc + '/api/search?query=vault')).text());
  await attempt('save_json', async () => (await fetch(svc + '/api/memory/save', {
    method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({text: 'planted by json'})})).status);
  await attempt('save_no_cors', async () => (await fetch(svc + '/api/memory/save', {
    method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'},
    body: JSON.stringify({text: 'planted by no-cors'})})).type);
  await attempt('forget', async () =>
    (await fetch(svc + '/api/observation/1', {method: 'DELETE'})).status);
  await attempt('forget_post', async () => (await fetch(svc + '/api/observations/forget', {
    method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'},
    body: JSON.stringify({ids: [1]})})).type);
  await attempt('form', () => new Promise((resolve) => {
    const frame = document.createElement('iframe');
    frame.name = 'sink';
    document.body.appendChild(frame);
    const form = document.createElement('form');
    form.method = 'POST'; form.enctype = 'text/plain'; form.target = 'sink';
    form.action = svc + '/api/memory/save';
    const field = document.createElement('input');
    field.name = '{"text": "planted by a form", "x": "'; field.value = '"}';
    form.appendChild(field);
    document.body.appendChild(form);
    frame.onload = () => resolve('submitted');
    form.submit();
  }));
  await attempt('stream', () => new Promise((resolve) => {
    const source = new EventSource(svc + '/stream');
    source.onmessage = (e) => { source.close(); resolve('read: ' + e.data); };
    source.addEventListener('connected', (e) => { source.close(); resolve('read: ' + e.data); });
    source.onerror = () => { source.close(); resolve('blocked: error'); };
  }));
  return out;
}
"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: Any) -> None:
        pass


class AttackerSite(ThreadingHTTPServer):
    """A tiny page server on another loopback port, in a thread."""

    def __init__(self, host: str) -> None:
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def origin(self, name: str) -> str:
        return f"http://{name}:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("origin-browser") / "data"
    data.mkdir()
    port = free_port()
    env = base_env(data, port, WORKBENCH_EMBEDDER="none")
    running = Service(data_dir=data, port=port, env=env).start()
    status, body = running.post("/api/memory/save", {"text": SECRET, "project": "vault"})
    assert status == 200, body
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_browser()


@pytest.mark.parametrize(
    ("bind", "name"), [("127.0.0.1", "localhost"), ("127.0.0.1", "127.0.0.1"), ("::1", "[::1]")]
)
def test_a_page_on_another_local_port_can_neither_read_nor_write(
    browser: Any, svc: Service, bind: str, name: str
) -> None:
    site = AttackerSite(bind)
    context = browser.new_context()
    try:
        before = store_rows(svc.data_dir)
        page = context.new_page()
        page.set_default_timeout(10000)
        page.goto(site.origin(name) + "/")
        seen = page.evaluate(ATTACK, svc.url)
    finally:
        context.close()
        site.close()
    assert set(seen) == {
        "export",
        "search",
        "save_json",
        "save_no_cors",
        "forget",
        "forget_post",
        "form",
        "stream",
    }
    for read in ("export", "search", "save_json", "forget", "stream"):
        assert str(seen[read]).startswith("blocked"), (read, seen[read])
    assert SECRET not in repr(seen)
    assert store_rows(svc.data_dir) == before
    status, obs = svc.get("/api/observation/1")
    assert status == 200
    assert SECRET in repr(obs)


def test_the_viewer_works_under_both_spellings_of_its_own_origin(
    browser: Any, svc: Service
) -> None:
    """The viewer at ``localhost:<port>`` and at ``127.0.0.1:<port>``: live, cards shown, and
    the page's own write (forget from the detail view goes through the same guard) allowed."""
    for url in (svc.url, f"http://localhost:{svc.port}"):
        pages = live_page(browser, url)
        page = next(pages)
        assert SECRET in page.inner_text("#feed")
        status = page.evaluate(
            """async () => (await fetch('/api/memory/save', {method: 'POST',
                 headers: {'Content-Type': 'application/json'},
                 body: JSON.stringify({text: 'saved by the viewer', project: 'vault'})})).status"""
        )
        assert status == 200
        next(pages, None)  # closes the context, asserts no script error or CSP refusal
