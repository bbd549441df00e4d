"""The typed replies of every source: what ``/api/search`` and ``/api/timeline`` send.

A source returns these models and the route, the CLI and the MCP tools send them as they are
(``wire()``); nothing builds a dict and checks it after. The local replies are the contract
the service always had: ``SearchReply`` (camelCase envelope, snake_case hits) and
``recall.timeline.Timeline``. A merged reply (``search --team``) is the same envelope plus the
team's fields, and every hit names its ``author``: ``"me"`` for this store's, a colleague's
with the ``ref`` (``team:author:id``) that cites it. A colleague's hit carries no ``stale``
(the evidence stays on their machine), so those two fields are left out of its wire form, as
they always were.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.alias_generators import to_camel

from workbench.recall.hits import SearchHit, TimelineItem
from workbench.recall.timeline import Timeline, TimelineAnchor

ME = "me"  # the author of this store's hits in a merged reply
NOT_SHARED = ("stale", "stale_files")  # a colleague's hit has no staleness of ours


def without_unshared(data: dict[str, Any]) -> dict[str, Any]:
    """A colleague's hit or item as dumped, less the fields only this store has (``NOT_SHARED``)."""
    for name in NOT_SHARED:
        data.pop(name, None)
    return data


class SearchReply(BaseModel):
    """Hits per kind, newest or best first, and what was counted and ran."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    observations: list[SearchHit]
    sessions: list[SearchHit]
    prompts: list[SearchHit]
    total_results: int = Field(
        description="every match, not the page; per kind at most 1,000 (recall.totals.COUNT_CAP)"
        ": past it the kind counts as 1,000 and totalIsLowerBound is true"
    )
    total_is_lower_bound: bool = Field(
        description="true when a count stopped at its cap or budget, or a vector ranker added hits"
    )
    query: str | None
    mode: str
    degraded: str | None
    vectors_behind: int | None
    vectors_static: int | None = None
    # How the page was ordered: the text index says so; not a wire field.
    _order_by: str = PrivateAttr(default="relevance")
    # ``(done, total)`` while the local index is filled from the embeddings cache: why
    # ``vectors_behind`` is above 0 (the text index says so); not a wire field.
    _vectors_rebuilding: tuple[int, int] | None = PrivateAttr(default=None)

    @property
    def order_by(self) -> str:
        return self._order_by

    @property
    def vectors_rebuilding(self) -> tuple[int, int] | None:
        return self._vectors_rebuilding

    def ordered_by(self, order_by: str) -> SearchReply:
        """This reply, saying its page was ordered by ``order_by`` (the text index shows it)."""
        self._order_by = order_by
        return self

    def rebuilding(self, progress: tuple[int, int] | None) -> Self:
        """This reply, saying the local index is being filled from the cache (``progress``)."""
        self._vectors_rebuilding = progress
        return self

    @property
    def total(self) -> int:
        """Hits on this page (``total_results`` counts every match)."""
        return len(self.observations) + len(self.sessions) + len(self.prompts)

    def wire(self) -> dict[str, Any]:
        """The ``format=json`` body, key for key."""
        return self.model_dump(by_alias=True)

    def text(self) -> str:
        """The ``format=text`` body: the compact index (``recall.compact``)."""
        from workbench.recall.compact import search_index

        return search_index(self)


class AuthoredHit(SearchHit):
    """A hit of a merged reply: who it is from (``"me"``: this store)."""

    author: str = ME


class TeamHit(AuthoredHit):
    """A colleague's hit: its ``id`` is their number; ``ref`` is how to cite and fetch it."""

    ref: str

    @model_serializer(mode="wrap")
    def _shared_fields(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        return without_unshared(handler(self))


class MergedSearchReply(SearchReply):
    """A local reply with the team's observations fused in, paged as one list."""

    # Each hit is an ``AuthoredHit`` (a ``TeamHit`` for a colleague's), sent with its own
    # fields; declared as the local hit so the local reply's lists stay plain ``list``s (a
    # ``Sequence`` field dumps about twice as slowly, on every local search).
    observations: list[SerializeAsAny[SearchHit]]
    sessions: list[SerializeAsAny[SearchHit]]
    prompts: list[SerializeAsAny[SearchHit]]
    team_snapshot: int = Field(description="the lake snapshot the team hits come from")
    team_results: int = Field(description="colleagues' hits on this page")
    offset: int
    # Left out when fresh (a field, not a serializer: the OpenAPI schema keeps the fields).
    team_stale: str | None = Field(
        default=None,
        description="why the team hits are from an older mirror (absent: fresh)",
        exclude_if=lambda stale: stale is None,
    )

    def text(self) -> str:
        """The compact index with authors: ``@author`` and ``team:author:id`` refs."""
        from workbench.sources.text import search_text

        return search_text(self)


class LocalTimeline(Timeline):
    """The local store's timeline (``recall.timeline.Timeline``) as a reply."""

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)

    def text(self) -> str:
        from workbench.recall.compact import timeline_text

        return timeline_text(self)


class AuthoredItem(TimelineItem):
    """A timeline item of a merged reply: who it is from (``"me"``: this store)."""

    author: str = ME


class TeamItem(AuthoredItem):
    """A colleague's observation in a merged timeline; never the anchor."""

    ref: str

    @model_serializer(mode="wrap")
    def _shared_fields(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        data = without_unshared(handler(self))
        data["is_anchor"] = data.pop("is_anchor")  # last, as the team timeline always sent it
        return data


class MergedTimeline(BaseModel):
    """A local timeline with the team's observations of the same window, in time order."""

    anchor: TimelineAnchor
    items: list[SerializeAsAny[AuthoredItem]]
    team_snapshot: int = Field(serialization_alias="teamSnapshot")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)

    def text(self) -> str:
        from workbench.sources.text import timeline_text

        return timeline_text(self)


__all__ = [
    "ME",
    "AuthoredHit",
    "AuthoredItem",
    "LocalTimeline",
    "MergedSearchReply",
    "MergedTimeline",
    "SearchReply",
    "TeamHit",
    "TeamItem",
]
