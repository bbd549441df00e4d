"""``OwnOriginOnly``: only the service's own origin may read or write the memory.

The service listens on 127.0.0.1:<port>, and every page the user's browser has open can send
it requests. A page on another localhost port (a dev server at ``localhost:3000``) is
another *origin*, and CORS that let any ``http://localhost:*`` in handed it the whole
memory (``GET /api/export``) and let it write and forget. So, at the edge, before any route:

- ``Host`` must be ``127.0.0.1:<port>``, ``localhost:<port>`` or ``[::1]:<port>`` (any case).
  Anything else is 403 ``FOREIGN_HOST``: a page on ``evil.example`` whose name was re-pointed
  at 127.0.0.1 (DNS rebinding) is same-origin *with itself*, and only its ``Host`` shows it.
- A request carrying an ``Origin`` is refused (403 ``FOREIGN_ORIGIN``) unless that origin is
  the service's own: ``http://`` + one of those three names + ``:<port>``, exactly. That
  holds for every method and path, reads included (a read leaks the memory), preflights and
  the SSE stream too. The three spellings are one service: the viewer opened at
  ``localhost:<port>`` may call ``127.0.0.1:<port>``, which is why CORS still names them.
- A request with no ``Origin`` but ``Sec-Fetch-Site: cross-site`` or ``same-site`` is a
  browser loading us from another page without CORS (an ``<img>``, a ``<script>``, a
  ``no-cors`` fetch; ``localhost:3000`` is the *same site* as ``localhost:<port>``, ports do
  not count). It is refused for the API and the stream and for every write; a navigation to
  the viewer page or its static files stays open, since the page then calls the API from its
  own origin.

Hooks, the CLI and the MCP server send no ``Origin`` and no ``Sec-Fetch-Site`` and name
``127.0.0.1:<port>``: they pass untouched.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from service.limits import reject

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# Paths a page on another site may load without CORS: the viewer page and its files.
PAGE_PREFIXES = ("/static/",)
PAGE_PATHS = {"/", "/favicon.ico", "/favicon.svg"}
OTHER_SITE = {"cross-site", "same-site"}


def own_hosts(port: int) -> frozenset[str]:
    """The ``Host`` values that name this service (lower case)."""
    return frozenset(f"{name}:{port}" for name in LOOPBACK_NAMES)


def own_origins(port: int) -> tuple[str, ...]:
    """The origins of this service's own pages, as browsers serialise them."""
    return tuple(f"http://{name}:{port}" for name in LOOPBACK_NAMES)


class OwnOriginOnly:
    def __init__(self, app: ASGIApp, port: int) -> None:
        self.app = app
        self.port = port
        self.hosts = own_hosts(port)
        self.origins = frozenset(own_origins(port))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = (_header(scope, b"host") or "").strip().lower()
        if host not in self.hosts:
            await reject(
                send,
                403,
                "FOREIGN_HOST",
                f"Host {host!r} is refused: this service answers only to "
                f"127.0.0.1:{self.port}, localhost:{self.port} or [::1]:{self.port} (another "
                "name pointing at 127.0.0.1 is another site); call it by one of those",
            )
            return
        refusal = self._foreign(scope)
        if refusal is not None:
            ours = ", ".join(own_origins(self.port))
            await reject(
                send,
                403,
                "FOREIGN_ORIGIN",
                f"requests from {refusal} are refused: only the service's own pages ({ours}) "
                "may read or write the memory; hooks, the CLI and MCP send no Origin. Open the "
                f"viewer at http://127.0.0.1:{self.port}/ instead of calling the API from "
                "another page",
            )
            return
        await self.app(scope, receive, send)

    def _foreign(self, scope: Scope) -> str | None:
        """What marks the request as sent by another page, or None when it may pass.

        Trigger: an Origin is present / Why: browsers send it on every cross-origin fetch
        and every POST, form posts included / Outcome: it decides alone.
        Trigger: no Origin, ``Sec-Fetch-Site`` names another site / Why: a no-cors load
        sends no Origin / Outcome: refused unless it only opens the viewer page.
        """
        origin = _header(scope, b"origin")
        if origin is not None:
            return None if origin.strip().lower() in self.origins else f"origin {origin!r}"
        site = (_header(scope, b"sec-fetch-site") or "").strip().lower()
        if site in OTHER_SITE and not _opens_the_page(scope):
            return f"another page (Sec-Fetch-Site: {site}, no Origin)"
        return None


def _opens_the_page(scope: Scope) -> bool:
    if scope["method"] not in ("GET", "HEAD"):
        return False
    path = str(scope.get("path", ""))
    return path in PAGE_PATHS or path.startswith(PAGE_PREFIXES)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None
