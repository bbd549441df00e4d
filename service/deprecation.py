"""How an HTTP answer says the request used an old parameter spelling (one release of grace).

One mechanism for every route that takes a filter (``/api/search``, ``POST /api/corpus``, the
list routes, ``/api/stats/*``, ``/api/context/inject``): a ``Deprecation: true`` header
(RFC 9745) and one ``Warning: 299 workbench "<old> is deprecated, use <new> (…)"`` header per
old name. Headers rather than a body field because ``/api/search`` answers plain text by
default.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from workbench.recall.search_query import LEGACY_NAMES, deprecation_notice, rename_legacy_traced


def mark_deprecated(response: Response, notices: list[str]) -> None:
    """Add the deprecation headers for ``notices`` (nothing when there are none)."""
    if not notices:
        return
    response.headers["Deprecation"] = "true"
    for notice in notices:
        response.headers.append("Warning", f'299 workbench "{notice}"')


def one_spelling(
    sent: dict[str, Any], fields: set[str]
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The query values ``sent`` (absent ones ``None``) under their one name (``fields``).

    Returns the values by new name, the spelling each value came under (for error messages),
    and the deprecation notices of the old names met. An old and a new spelling that disagree
    are a 422 naming both (``SpellingConflict``); a blank one never counts.
    """
    present = {name: value for name, value in sent.items() if value is not None}
    values, met, sent_as = rename_legacy_traced(present, fields)
    came_as = {field: sent_as.get(field, field) for field in fields}
    return values, came_as, [deprecation_notice(old, LEGACY_NAMES[old]) for old in met]
