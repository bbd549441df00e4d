"""Observation replies beyond the stored record itself (``workbench.models.Observation``)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from workbench.api_models.base import CamelModel
from workbench.models import Observation
from workbench.sources.observations import ObservationView

__all__ = ["FileObservation", "ObservationView", "ObservationsByFile", "PathCandidates"]


class FileObservation(Observation):
    """An observation that read or modified the file asked about."""

    model_config = ConfigDict(populate_by_name=True)

    file_action: Literal["read", "modified"] = Field(alias="fileAction")


class PathCandidates(CamelModel):
    absolute: list[str]
    relative: list[str]


class ObservationsByFile(CamelModel):
    """``GET /api/observations/by-file``: every observation that touched the file."""

    path: str
    candidates: PathCandidates
    project: str | None
    count: int
    observations: list[FileObservation]
