"""One local source and the team lake's side read as one: rank fusion, local wins, one page.

- **Search.** The team side is asked first (it brings its mirror to the lake's newest
  snapshot, or says why it serves an older one), then the local source. The two lists' scores
  are not comparable, their ranks are: reciprocal rank (``recall.fusion.rrf``). The team side
  already left this store's own rows out (local wins on duplicates).
- **Paging.** ``offset`` pages through the *fused* list: both lists are read from their top
  to ``offset + limit`` (the local one in pages of at most ``MAX_LIMIT``), fused, and the page
  cut from the result, so page 2 continues page 1 whatever mix of local and team hits it
  holds. Sessions and prompts stay local (prompts never leave a machine) and are paged as
  locally.
- **Get.** Team refs go to the team side, ids to the local source; this store's observations
  come first.
- **Timeline.** The local timeline, plus the team's observations between its first and last
  item (or at the anchor's moment when it has none), in the anchor's project unless one is
  given, in time order (local first on a tie).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from workbench.recall import hits
from workbench.recall.hits import SearchHit, TimelineItem
from workbench.recall.search import MAX_LIMIT
from workbench.sources.observations import Fetched
from workbench.sources.replies import (
    ME,
    AuthoredHit,
    AuthoredItem,
    MergedSearchReply,
    MergedTimeline,
    SearchReply,
    TeamHit,
)
from workbench.sources.source import (
    GetAsk,
    Getter,
    MemorySource,
    RefGetter,
    TeamPage,
    TeamSide,
    TimelineAsk,
)

if TYPE_CHECKING:
    from workbench.recall.search_query import SearchQuery


class Merged:
    """``local`` and ``team`` as one ``MemorySource``."""

    def __init__(self, local: MemorySource, team: TeamSide) -> None:
        self.local = local
        self.team = team

    def search(self, ask: SearchQuery, *, count_totals: bool = True) -> MergedSearchReply:
        """One page of the fused list (totals are always counted: the envelope adds them)."""
        ask = ask.model_copy(update={"team": False})
        team = self.team.search(ask, ask.offset + ask.limit)
        local = self._local_prefix(ask)
        return merge_search(local, team, limit=ask.limit, offset=ask.offset)

    def _local_prefix(self, ask: SearchQuery) -> SearchReply:
        """The local reply for the page asked, its ``observations`` the top ``offset + limit``."""
        need = ask.offset + ask.limit
        if need <= MAX_LIMIT:
            first = self.local.search(ask.model_copy(update={"limit": need, "offset": 0}))
            return first.model_copy(
                update={
                    "sessions": first.sessions[ask.offset : need],
                    "prompts": first.prompts[ask.offset : need],
                }
            )
        answer = self.local.search(ask)
        own: list[SearchHit] = []
        for start in range(0, need, MAX_LIMIT):
            size = min(MAX_LIMIT, need - start)
            page = self.local.search(ask.model_copy(update={"limit": size, "offset": start}))
            own += page.observations
            if len(page.observations) < size:
                break
        return answer.model_copy(update={"observations": own})

    def timeline(self, ask: TimelineAsk) -> MergedTimeline:
        local = self.local.timeline(ask)
        epochs = [i.created_at_epoch for i in local.items] or [local.anchor.created_at_epoch]
        window = self.team.window(min(epochs), max(epochs), ask.project or local.anchor.project)
        items: list[AuthoredItem] = [authored_item(i) for i in local.items]
        items += window.items
        items.sort(key=lambda i: (i.created_at_epoch, i.author != ME))
        return MergedTimeline(anchor=local.anchor, items=items, team_snapshot=window.snapshot)

    def get(self, ask: GetAsk) -> Fetched:
        return merge_get(self.local, self.team, ask)


def merge_get(local: Getter, team: RefGetter, ask: GetAsk) -> Fetched:
    """The team's observations for the refs (asked first: an unknown lake or a bad ref is said
    before anything local is read), then ``local``'s for the ids; each side asked only for
    what it holds."""
    theirs, missing_refs = team.get(ask.refs) if ask.refs else ([], [])
    mine = local.get(replace(ask, refs=())) if ask.ids else Fetched()
    return Fetched(
        mine=mine.mine, theirs=theirs, missing_ids=mine.missing_ids, missing_refs=missing_refs
    )


def merge_search(
    local: SearchReply, team: TeamPage, *, limit: int, offset: int = 0
) -> MergedSearchReply:
    """``local`` (observations from the top) with ``team``'s fused in; the page at ``offset``.

    Local hits get ``author: "me"``; each team hit its rank in the team list.
    """
    from workbench.recall.fusion import rrf

    own: list[SearchHit] = [authored_hit(h) for h in local.observations]
    theirs: list[SearchHit] = [
        hit.model_copy(update={"ranks": {"team": rank}})
        for rank, hit in enumerate(team.hits, start=1)
    ]
    pool = own + theirs
    order = [i for i, _ in rrf([("local", range(len(own))), ("team", range(len(own), len(pool)))])]
    page = [pool[i] for i in order][offset : offset + limit]
    stale = (
        f"the team lake could not be read ({team.stale}); team hits are from the local mirror "
        f"at snapshot {team.snapshot}"
        if team.stale
        else None
    )
    return MergedSearchReply(
        observations=page,
        sessions=[authored_hit(h) for h in local.sessions],
        prompts=[authored_hit(h) for h in local.prompts],
        total_results=local.total_results + len(team.hits),
        total_is_lower_bound=local.total_is_lower_bound,
        query=local.query,
        mode=local.mode,
        degraded=local.degraded,
        vectors_behind=local.vectors_behind,
        vectors_static=local.vectors_static,
        team_snapshot=team.snapshot,
        team_results=sum(1 for h in page if isinstance(h, TeamHit)),
        offset=offset,
        team_stale=stale,
    ).rebuilding(local.vectors_rebuilding)


def authored_hit(hit: SearchHit) -> AuthoredHit:
    """A local hit naming its author (``"me"``): the same fields, the same values."""
    return hits.construct(AuthoredHit, {**vars(hit), "author": ME})


def authored_item(item: TimelineItem) -> AuthoredItem:
    return hits.construct(AuthoredItem, {**vars(item), "author": ME})
