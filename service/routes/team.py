"""Colleagues' observations by their team ref: ``team:<author>:<id>`` (``workbench/team/refs.py``).

- ``GET /api/team/observation/{ref}``: ``{"ref", "observations", "teamSnapshot"}`` (a list: one
  author publishing from two machines may have two observations under one ref).
- ``POST /api/team/observations/batch`` ``{"refs": [...]}``: ``{"observations", "missing"}``.

A malformed ref is a 422 saying the form, an unknown one a 404, no team lake a 409 saying
``workbench team init``. Both ask the team source (``team/source.py``). Plain ``def``: the
mirror refresh may open the lake (thread pool).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from service.deps import RuntimeDep
from workbench.api_models.team import TeamObservationReply, TeamObservationsBatch
from workbench.team import refs
from workbench.team.source import TeamSource

router = APIRouter(prefix="/api/team", tags=["team"])


class TeamRefs(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # as service.schemas' bodies

    refs: Annotated[
        list[Annotated[str, Field(max_length=300)]],
        Field(min_length=1, max_length=refs.MAX_REFS),
    ]


@router.get("/observation/{ref}", response_model=TeamObservationReply)
def team_observation(
    runtime: RuntimeDep,
    ref: Annotated[str, Path(max_length=300, description="team:AUTHOR:ID from a team hit")],
) -> TeamObservationReply:
    """A colleague's full observation(s) by team ref."""
    found = refs.resolve_one(TeamSource(runtime.settings), ref)
    return TeamObservationReply(ref=ref, observations=found, team_snapshot=found[0].team_snapshot)


@router.post("/observations/batch", response_model=TeamObservationsBatch)
def team_observations(body: TeamRefs, runtime: RuntimeDep) -> TeamObservationsBatch:
    """Colleagues' full observations for many team refs; the refs not found in ``missing``."""
    found, missing = TeamSource(runtime.settings).get(body.refs)
    return TeamObservationsBatch(observations=found, missing=missing)
