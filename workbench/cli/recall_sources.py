"""What ``workbench search | timeline | show`` read: the store through the service, or the team.

``ServiceSource`` is the local store as the running service answers for it (hybrid search,
the embedding model loaded once, there). When the service is down it says so once on stderr
and opens the database read-only here instead (full text only): the CLI never starts the
service just to read. ``source_for`` adds the team lake when asked (``--team``, or team refs
given to ``show``), after
checking it is configured, so the error names ``workbench team init`` before any search.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer

from workbench.errors import ServiceUnavailable

if TYPE_CHECKING:
    from workbench.recall.search_query import SearchQuery
    from workbench.settings import Settings
    from workbench.sources.local import LocalSource
    from workbench.sources.observations import Fetched
    from workbench.sources.replies import LocalTimeline, SearchReply
    from workbench.sources.source import GetAsk, MemorySource, TimelineAsk
    from workbench.store.database import Store


def source_for(settings: Settings, team: bool) -> MemorySource:
    """The local store (through the service), read with the team lake when ``team``."""
    local = ServiceSource(settings)
    if not team:
        return local
    from workbench.team.lake import require_configured
    from workbench.team.source import with_team

    require_configured(settings)  # before any search: the error says `workbench team init`
    return with_team(settings, local)


class ServiceSource:
    """The local store as the service answers for it, or read-only here when it is down."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.service_up = True

    def search(self, ask: SearchQuery, *, count_totals: bool = True) -> SearchReply:
        from workbench.api_models.check import checked
        from workbench.sources.replies import SearchReply

        params = {**ask.model_copy(update={"team": False}).wire(), "format": "json"}
        data = self._from_service("GET", "/api/search", params=params)
        if data is not None:
            return SearchReply.model_validate(checked(SearchReply, data, "search"))
        with readonly_source(self.settings) as local:
            return local.search(ask)

    def timeline(self, ask: TimelineAsk) -> LocalTimeline:
        from workbench.api_models.check import checked
        from workbench.sources.replies import LocalTimeline

        params = {
            "anchor": ask.anchor,
            "query": ask.query,
            "depth_before": ask.depth_before,
            "depth_after": ask.depth_after,
            "project": ask.project,
        }
        clean = {k: v for k, v in params.items() if v is not None}
        data = self._from_service("GET", "/api/timeline", params=clean)
        if data is not None:
            return LocalTimeline.model_validate(checked(LocalTimeline, data, "timeline"))
        with readonly_source(self.settings) as local:
            return local.timeline(ask)

    def get(self, ask: GetAsk) -> Fetched:
        """This store's observations by id, from the service (read-only here when it is down:
        then in id order, as ``show`` always printed them); team refs are not ours."""
        from dataclasses import replace

        from workbench.api_models.check import checked
        from workbench.sources.observations import Fetched, ObservationView

        if not ask.ids:
            return Fetched(missing_refs=list(ask.refs))
        body: dict[str, Any] = {"ids": list(ask.ids), "orderBy": ask.order_by}
        for key, value in (("limit", ask.limit), ("project", ask.project)):
            if value is not None:
                body[key] = value
        data = self._from_service("POST", "/api/observations/batch", json=body)
        if data is None:
            with readonly_source(self.settings) as local:
                return local.get(replace(ask, order_by="id_asc"))
        mine = [
            ObservationView.model_validate(o) for o in checked(list[ObservationView], data, "show")
        ]
        absent = sorted(set(ask.ids) - {o.id for o in mine})
        return Fetched(mine=mine, missing_ids=absent, missing_refs=list(ask.refs))

    def _from_service(self, method: str, path: str, **kwargs: Any) -> Any | None:
        """The service's answer, or None when it is not running (said once, on stderr)."""
        if not self.service_up:
            return None
        answer = from_service(self.settings, method, path, **kwargs)
        self.service_up = answer is not None
        return answer


def from_service(settings: Settings, method: str, path: str, **kwargs: Any) -> Any | None:
    """The service's answer, or None when it is not running (the caller reads locally)."""
    from workbench.client import ServiceClient

    try:
        with ServiceClient(settings, timeout=60.0) as client:
            return client.request(method, path, **kwargs)
    except ServiceUnavailable:
        typer.echo(
            f"workbench service not running at {settings.base_url}; reading "
            f"{settings.db_path} read-only (full-text search only). Start it with "
            "`workbench serve --detach` for hybrid search.",
            err=True,
        )
        return None


@contextmanager
def readonly_source(settings: Settings) -> Iterator[LocalSource]:
    """The local source over the database opened read-only (no vector ranker here)."""
    from workbench.recall.search import SearchEngine
    from workbench.sources.local import LocalSource

    with readonly_store(settings) as store:
        yield LocalSource(SearchEngine(store, settings))


@contextmanager
def readonly_store(settings: Settings) -> Iterator[Store]:
    from workbench.store.database import Store

    try:
        store = Store(settings.db_path, readonly=True)
    except FileNotFoundError as exc:
        raise ServiceUnavailable(str(exc)) from None
    with store:
        yield store
