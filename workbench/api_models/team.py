"""Team replies: a colleague's observations by team ref (``service/routes/team.py``).

A team observation is shaped like a local one (``workbench.models.Observation``) plus
``author``, ``ref`` and the snapshot it was read at, without the local-only fields (its
``content_hash`` stays in the mirror). Field types are loose on purpose (``type`` is any
string, as in ``ObservationDraft``): a colleague on another version may publish observation
types this one does not know, and a reply must never fail on their data.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from workbench.api_models.base import CamelModel
from workbench.models import ObservationDraft


class TeamObservation(ObservationDraft):
    """One colleague's observation; ``id`` is the id in *their* store (cite ``ref``)."""

    model_config = ConfigDict(populate_by_name=True)

    id: int
    ref: str
    author: str
    content_session_id: str | None = None
    project: str
    platform_source: str | None = None
    prompt_number: int = 0
    discovery_tokens: int = 0
    created_at: str
    created_at_epoch: int
    generated_by: str = "offline"
    team_snapshot: int = Field(alias="teamSnapshot")


class TeamObservationReply(CamelModel):
    """``GET /api/team/observation/{ref}``: every live observation under one ref."""

    ref: str
    observations: list[TeamObservation]
    team_snapshot: int


class TeamObservationsBatch(CamelModel):
    """``POST /api/team/observations/batch``: the refs found, and those that were not."""

    observations: list[TeamObservation]
    missing: list[str]
