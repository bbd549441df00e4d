"""The viewer page: ``GET /`` and its assets under ``/static/`` (``service/static/``).

No build step and no network: the page is hand-written files the service serves itself
(``index.html``, ``app.css``, and ES modules loaded by ``<script type="module" src=app.js>``,
which import each other as ``./<name>.js``), so it works offline on a fresh install. Module
scripts must come with a JavaScript content type (``CONTENT_TYPES``), and the CSP's
``script-src 'self'`` lets them load without allowing any inline script.

Every response carries a strict Content-Security-Policy (``CSP``): scripts, styles, images
and connections only from this origin, no inline script or style, no plugins, no framing.
Stored memories are untrusted text (a tool output can contain anything), and the page
renders them with ``textContent`` only; the CSP is the second wall, so even a rendering bug
could not run a script that a memory smuggled in.

Assets are looked up by exact file name in a table built from the folder (never joined to a
user path), so no request can read outside ``service/static/``. Each is sent with its content
type, ``nosniff``, and an ETag so a reload revalidates instead of downloading again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import Response

from workbench.errors import NotFound

router = APIRouter(include_in_schema=False)

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}


def assets() -> dict[str, Path]:
    """``file name -> path`` of every servable file in ``service/static/``.

    A flat folder on purpose: a name has no ``/``, and the modules import ``./<name>.js``.
    """
    if not STATIC_DIR.is_dir():
        return {}
    return {p.name: p for p in STATIC_DIR.iterdir() if p.is_file() and p.suffix in CONTENT_TYPES}


def _send(path: Path, request: Request) -> Response:
    body = path.read_bytes()  # a few tens of KB, read per request so edits show on reload
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {**SECURITY_HEADERS, "ETag": etag, "Cache-Control": "no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=CONTENT_TYPES[path.suffix], headers=headers)


@router.get("/")
def index(request: Request) -> Response:
    page = assets().get("index.html")
    if page is None:
        raise NotFound("the viewer page is not installed (service/static/index.html is missing)")
    return _send(page, request)


@router.get("/static/{name}")
def static(name: str, request: Request) -> Response:
    path = assets().get(name)
    if path is None:
        raise NotFound(f"no asset named {name!r}; the page's files are {sorted(assets())}")
    return _send(path, request)


@router.get("/favicon.ico")
def favicon(request: Request) -> Response:
    """Browsers ask for /favicon.ico whatever the page says; answer with the SVG mark."""
    path = assets().get("favicon.svg")
    if path is None:
        raise NotFound("no favicon")
    return _send(path, request)
