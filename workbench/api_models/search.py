"""Search and timeline replies (``GET /api/search?format=json``, ``GET /api/timeline``).

Both are what the sources return (``workbench.sources.replies``): a hit is
``workbench.recall.hits.SearchHit`` and a timeline ``workbench.recall.timeline.Timeline``
(snake_case fields, as stored); the search envelope is camelCase.
"""

from __future__ import annotations

from workbench.recall.timeline import Timeline
from workbench.sources.replies import SearchReply

__all__ = ["SearchReply", "Timeline"]
