"""``get_observations``' two sides as the service answers them: ids and team refs over HTTP.

A tool module never touches the store (the service is the one reader and writer), so the MCP
tool cannot hold a ``LocalSource`` or a ``TeamSource``; these two ask the service's routes for
the same typed values, and ``sources.merged.merge_get`` puts them together as it does for
``workbench show``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.sources.observations import Fetched, ObservationView, TeamObservation

if TYPE_CHECKING:
    from workbench.mcp_server.backend import ServiceBackend
    from workbench.sources.source import GetAsk


class ServiceIds:
    """This store's observations by id (``POST /api/observations/batch``, the ledger told the
    agent fetched them: ``source: "mcp"``)."""

    def __init__(self, client: ServiceBackend) -> None:
        self.client = client

    def get(self, ask: GetAsk) -> Fetched:
        from workbench.api_models.check import checked

        body: dict[str, Any] = {"ids": list(ask.ids), "source": "mcp"}
        for key, value in (("orderBy", ask.order_by), ("limit", ask.limit)):
            if value is not None:
                body[key] = value
        if ask.project is not None:
            body["project"] = ask.project
        found = checked(
            list[ObservationView],
            self.client.post("/api/observations/batch", body),
            "get_observations",
        )
        mine = [ObservationView.model_validate(o) for o in found]
        # With a limit, an absent id may just be cut off: none is reported missing.
        absent = [] if ask.limit else sorted(set(ask.ids) - {o.id for o in mine})
        return Fetched(mine=mine, missing_ids=absent)


class ServiceRefs:
    """Colleagues' observations by team ref (``POST /api/team/observations/batch``)."""

    def __init__(self, client: ServiceBackend) -> None:
        self.client = client

    def get(self, refs: Sequence[str]) -> tuple[list[TeamObservation], list[str]]:
        answer = self.client.post("/api/team/observations/batch", {"refs": list(refs)})
        found = [TeamObservation.model_validate(o) for o in answer["observations"]]
        return found, list(answer["missing"])
