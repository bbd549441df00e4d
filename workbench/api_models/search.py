"""Search and timeline replies (``GET /api/search?format=json``, ``GET /api/timeline``).

Both are what the sources return (``workbench.sources.replies``): a hit is
``workbench.recall.hits.SearchHit`` and a timeline ``workbench.recall.timeline.Timeline``
(snake_case fields, as stored); the search envelope is camelCase. ``SearchAnswer`` is what
``/api/search``'s OpenAPI documents: a ``SearchReply``, or with ``team=true`` a
``MergedSearchReply`` (the same envelope plus the team's fields, every hit naming its author).
"""

from __future__ import annotations

from pydantic import RootModel

from workbench.recall.timeline import Timeline
from workbench.sources.replies import MergedSearchReply, SearchReply

__all__ = ["MergedSearchReply", "SearchAnswer", "SearchReply", "Timeline"]


class SearchAnswer(RootModel[SearchReply | MergedSearchReply]):
    """``GET /api/search?format=json``: a ``SearchReply``; with ``team=true`` a
    ``MergedSearchReply``. Documentation only: the route sends the source's reply as it is."""
