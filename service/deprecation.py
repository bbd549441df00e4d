"""How an HTTP answer says the request used an old parameter spelling (one release of grace).

One mechanism for every route that reads the search contract (``/api/search``,
``POST /api/corpus``): a ``Deprecation: true`` header (RFC 9745) and one
``Warning: 299 workbench "<old> is deprecated, use <new> (…)"`` header per old name. Headers
rather than a body field because ``/api/search`` answers plain text by default.
"""

from __future__ import annotations

from starlette.responses import Response


def mark_deprecated(response: Response, notices: list[str]) -> None:
    """Add the deprecation headers for ``notices`` (nothing when there are none)."""
    if not notices:
        return
    response.headers["Deprecation"] = "true"
    for notice in notices:
        response.headers.append("Warning", f'299 workbench "{notice}"')
