"""Observation replies beyond the stored record itself (``workbench.models.Observation``)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from workbench.api_models.base import CamelModel
from workbench.models import Observation


class ObservationView(Observation):
    """An observation as the API answers it: the stored record and its staleness.

    ``stale``: a file it cites changed since it was made (``workbench.staleness``); None when
    unknown (no evidence recorded). ``stale_files``: those files (None when unknown).
    """

    stale: bool | None = None
    stale_files: list[str] | None = None


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
