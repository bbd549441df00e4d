"""``MemorySource`` and ``TeamSide``: what callers and the merger are written against.

A caller (the search route, ``workbench search | show``, the MCP tools) picks its source once
(the local store, or the local store merged with the team lake) and asks it; it never branches
on ``team`` again. ``TeamSide`` is the smaller question a merger asks of the team lake: its own
hits under the same query, already without this store's duplicates, its observations in a
window of time, and the observations team refs name. ``team/source.py`` implements it; nothing
here imports ``team/``.

The fourth question, ``select`` (the observations one filter value picks, for a corpus), is
``sources.select.Selector``: its callers hold a connection and a search function rather than
an engine, so it is a protocol of its own (``LocalRows``, ``TeamSource``, ``MergedRows``).
What ``sql`` and ``stats`` read is ``sources.tables.Tables``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from workbench.recall.search_query import SearchQuery
    from workbench.sources.observations import Fetched, TeamObservation
    from workbench.sources.replies import (
        LocalTimeline,
        MergedTimeline,
        SearchReply,
        TeamHit,
        TeamItem,
    )
    from workbench.store.observations import OrderBy


@dataclass(frozen=True)
class TimelineAsk:
    """One timeline question: an anchor (or a query to anchor on) and the depths around it."""

    anchor: int | str | None = None
    query: str | None = None
    depth_before: int = 5
    depth_after: int = 5
    project: str | None = None


@dataclass(frozen=True)
class GetAsk:
    """Full observations by this store's ids and colleagues' team refs (``team:AUTHOR:ID``).

    ``order_by``, ``limit`` and ``project`` narrow the local ids only (as
    ``POST /api/observations/batch`` does); refs are returned in the order asked.
    """

    ids: tuple[int, ...] = ()
    refs: tuple[str, ...] = ()
    order_by: OrderBy = "date_desc"
    limit: int | None = None
    project: str | None = None


class Getter(Protocol):
    """Anything that fetches observations by id (a ``MemorySource``, or the MCP tools' line to
    the service)."""

    def get(self, ask: GetAsk) -> Fetched: ...


class RefGetter(Protocol):
    """Anything that resolves team refs (a ``TeamSide``, or the MCP tools' line to the
    service)."""

    def get(self, refs: Sequence[str]) -> tuple[list[TeamObservation], list[str]]: ...


class MemorySource(Protocol):
    """A place memories are read from: layers 1 and 2 of search → timeline → fetch."""

    def search(self, ask: SearchQuery, *, count_totals: bool = True) -> SearchReply:
        """One page of hits per kind; ``count_totals=False`` skips ``totalResults``' counts."""
        ...

    def timeline(self, ask: TimelineAsk) -> LocalTimeline | MergedTimeline:
        """The records around an anchor, in time order, the anchor marked."""
        ...

    def get(self, ask: GetAsk) -> Fetched:
        """The full observations asked for, and those not found (layer 3)."""
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

    def get(self, refs: Sequence[str]) -> tuple[list[TeamObservation], list[str]]:
        """The observations ``refs`` name, in the order asked, and the refs not found."""
        ...
