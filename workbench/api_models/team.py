"""Team replies: a colleague's observations by team ref (``service/routes/team.py``).

A team observation is what the team source returns (``workbench.sources.observations``):
shaped like a local one plus ``author``, ``ref`` and the snapshot it was read at.
"""

from __future__ import annotations

from workbench.api_models.base import CamelModel
from workbench.sources.observations import TeamObservation

__all__ = ["TeamObservation", "TeamObservationReply", "TeamObservationsBatch"]


class TeamObservationReply(CamelModel):
    """``GET /api/team/observation/{ref}``: every live observation under one ref."""

    ref: str
    observations: list[TeamObservation]
    team_snapshot: int


class TeamObservationsBatch(CamelModel):
    """``POST /api/team/observations/batch``: the refs found, and those that were not."""

    observations: list[TeamObservation]
    missing: list[str]
