"""``MemorySource`` and ``TeamSide``: what callers and the merger are written against.

A caller (the search route, ``workbench search``, the MCP tools) picks its source once (the
local store, or the local store merged with the team lake) and asks it; it never branches on
``team`` again. ``TeamSide`` is the smaller question a merger asks of the team lake: its own
hits under the same query, already without this store's duplicates, and its observations in
a window of time. ``team/source.py`` implements it; nothing here imports ``team/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from workbench.recall.search_query import SearchQuery
    from workbench.sources.replies import (
        LocalTimeline,
        MergedTimeline,
        SearchReply,
        TeamHit,
        TeamItem,
    )


@dataclass(frozen=True)
class TimelineAsk:
    """One timeline question: an anchor (or a query to anchor on) and the depths around it."""

    anchor: int | str | None = None
    query: str | None = None
    depth_before: int = 5
    depth_after: int = 5
    project: str | None = None


class MemorySource(Protocol):
    """A place memories are read from: layers 1 and 2 of search → timeline → fetch."""

    def search(self, ask: SearchQuery, *, count_totals: bool = True) -> SearchReply:
        """One page of hits per kind; ``count_totals=False`` skips ``totalResults``' counts."""
        ...

    def timeline(self, ask: TimelineAsk) -> LocalTimeline | MergedTimeline:
        """The records around an anchor, in time order, the anchor marked."""
        ...


@dataclass(frozen=True)
class TeamPage:
    """The team's hits for one query, best first, and the snapshot they come from."""

    hits: Sequence[TeamHit]
    snapshot: int
    stale: str | None = None  # why they come from an older mirror (None: fresh)


@dataclass(frozen=True)
class TeamWindow:
    """The team's observations in a window of time, oldest first, at one snapshot."""

    items: Sequence[TeamItem]
    snapshot: int


class TeamSide(Protocol):
    """What a merger asks of the team lake."""

    def search(self, ask: SearchQuery, depth: int) -> TeamPage:
        """The team's top ``depth`` observations for ``ask`` (none when ``ask`` wants no
        observations), this store's own rows left out: local wins."""
        ...

    def window(self, start_ms: int, end_ms: int, project: str | None) -> TeamWindow:
        """The team's observations created in ``[start_ms, end_ms]``, this store's left out."""
        ...
