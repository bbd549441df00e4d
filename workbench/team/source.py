"""The team lake as the ``TeamSide`` a merger asks (``workbench.sources``).

- **Search** reads the team mirror (``team/mirror.py``), refreshed to the lake's newest
  snapshot first (a few ms when nothing changed, plus opening the lake), then BM25 over its
  FTS index under the same filters as local search (``team/mirror_read.py``). The lake is
  asked for a newer snapshot only when the mirror last heard from it over
  ``team_mirror_max_age_s`` ago (30 s by default: opening the lake is most of a team search's
  cost). When the lake cannot be reached the last mirror answers and the page says so.
- **Window** (the timeline) reads the lake itself at its newest snapshot.
- **Get** resolves team refs through the mirror (``team/refs.py``).
- **Select** (a corpus) reads the lake itself under the same filter value
  (``read.corpus_rows``), each row with its ``author``.
- **Local wins.** This store's own rows are left out of both (``read.drop_local_duplicates``).
- **Citable ids.** A colleague's hit carries ``ref``: ``team:<author>:<their local id>``
  (``team/refs.py``), which ``workbench show``, the MCP ``get_observations`` tool and
  ``GET /api/team/observation/{ref}`` resolve; its ``id`` is *their* number, not yours.

``with_team(settings, local)`` is how a caller reads the local store and the team as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.recall import hits
from workbench.sources.merged import Merged
from workbench.sources.observations import TeamObservation
from workbench.sources.replies import TeamHit, TeamItem
from workbench.sources.select import SelectAsk, Selected
from workbench.sources.source import MemorySource, TeamPage, TeamWindow
from workbench.team import mirror, mirror_read
from workbench.team.read import (
    corpus_rows,
    drop_local_duplicates,
    observations_between,
    reader,
    team_hit,
)

if TYPE_CHECKING:
    from workbench.recall.search_query import SearchQuery
    from workbench.settings import Settings

_NOT_IN_TIMELINE = ("score", "ranks", "rankers", "rerank")


def with_team(settings: Settings, local: MemorySource) -> Merged:
    """``local`` and the team lake read as one source."""
    return Merged(local, TeamSource(settings))


class TeamSource:
    """The team lake of ``settings`` (``workbench team init``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def search(self, ask: SearchQuery, depth: int) -> TeamPage:
        """The team's top ``depth`` observations (prompts never leave a machine)."""
        settings = self.settings
        freshness = mirror.refresh(settings, max_age_s=settings.team_mirror_max_age_s)
        rows: list[dict[str, Any]] = []
        if not ask.kinds or "observations" in ask.kinds:
            rows = _team_rows(settings, ask.query, ask.filters(), depth)
        return TeamPage(
            hits=[hits.construct(TeamHit, team_hit(r)) for r in rows],
            snapshot=freshness.snapshot,
            stale=freshness.stale,
        )

    def get(self, refs: Sequence[str]) -> tuple[list[TeamObservation], list[str]]:
        """The observations the refs name (``team/refs.py``; the lake must be configured)."""
        from workbench.team import lake
        from workbench.team import refs as team_refs

        for text in refs:
            team_refs.parse(text)  # a malformed ref is refused before anything is read
        lake.require_configured(self.settings)
        found, missing = team_refs.resolve(self.settings, list(refs))
        return [TeamObservation.model_validate(row) for row in found], missing

    def select(self, ask: SelectAsk) -> Selected:
        """The team's newest (or, with a query, best) ``ask.limit`` observations under the
        filter, oldest first, this store's own left out."""
        rows = corpus_rows(self.settings, ask.filters, ask.query, ask.limit)
        return sorted(rows, key=lambda r: (r["created_at_epoch"], r["author"], r["id"]))

    def window(self, start_ms: int, end_ms: int, project: str | None) -> TeamWindow:
        r = reader(self.settings)
        try:
            rows = observations_between(r, start_ms, end_ms, project=project)
            rows = drop_local_duplicates(rows, r.author, self.settings.db_path)
            items = [
                hits.construct(
                    TeamItem,
                    {k: v for k, v in team_hit(row).items() if k not in _NOT_IN_TIMELINE}
                    | {"is_anchor": False},
                )
                for row in rows
            ]
            return TeamWindow(items=items, snapshot=r.snapshot)
        finally:
            r.close()


def _team_rows(
    settings: Settings, query: str | None, filters: Any, wanted: int
) -> list[dict[str, Any]]:
    """The team list's top ``wanted`` rows after local-wins drops this store's own rows.

    Why read deeper until that many are kept (or the mirror has no more): your own published
    rows may fill any fixed depth, and a page fused from fewer than ``offset + limit`` team
    rows differs from the next page's cut, so pages repeated and skipped hits. With at least
    ``wanted`` kept, every page is cut from the same list: the rows kept from the top k are a
    prefix of those kept from the top k' > k.
    """
    depth = 2 * wanted
    while True:
        read = mirror_read.read_search(settings, query, filters, limit=depth)
        rows = drop_local_duplicates(read, settings.team_author_id(), settings.db_path)
        if len(rows) >= wanted or len(read) < depth:
            return rows
        depth *= 4
