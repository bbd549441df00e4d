"""Full observations by id or team ref (layer 3 of search → timeline → fetch), typed.

- ``ObservationView``: one of this store's observations as the API answers it, the stored
  record and its staleness.
- ``TeamObservation``: a colleague's, shaped like a local one plus ``author``, ``ref`` and the
  snapshot it was read at, without the local-only fields (its ``content_hash`` stays in the
  mirror). Its fields are declared in the team mirror's column order, the order
  ``workbench show --json`` always printed them in. Field types are loose on purpose (``type``
  is any string): a colleague on another version may publish observation types this one does
  not know, and a reply must never fail on their data.
- ``Fetched``: what a source's ``get`` returns, the observations found (this store's first,
  then the team's, each in the order asked) and what was not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workbench.models import Observation


class ObservationView(Observation):
    """An observation as the API answers it: the stored record and its staleness.

    ``stale``: a file it cites changed since it was made (``workbench.staleness``); None when
    unknown (no evidence recorded). ``stale_files``: those files (None when unknown).
    """

    stale: bool | None = None
    stale_files: list[str] | None = None


class TeamObservation(BaseModel):
    """One colleague's observation; ``id`` is the id in *their* store (cite ``ref``)."""

    model_config = ConfigDict(populate_by_name=True)

    author: str
    content_session_id: str | None = None
    project: str
    platform_source: str | None = None
    prompt_number: int = 0
    type: str = "discovery"
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = Field(default_factory=list)
    concepts: list[str] = Field(default_factory=list)
    files_read: list[str] = Field(default_factory=list)
    files_modified: list[str] = Field(default_factory=list)
    discovery_tokens: int = 0
    created_at: str
    created_at_epoch: int
    generated_by: str = "offline"
    id: int
    ref: str
    team_snapshot: int = Field(alias="teamSnapshot")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


@dataclass(frozen=True)
class Fetched:
    """The observations a ``get`` found, and the ids and refs it did not."""

    mine: list[ObservationView] = field(default_factory=list)
    theirs: list[TeamObservation] = field(default_factory=list)
    missing_ids: list[int] = field(default_factory=list)  # ascending
    missing_refs: list[str] = field(default_factory=list)  # in the order asked

    @property
    def observations(self) -> list[ObservationView | TeamObservation]:
        return [*self.mine, *self.theirs]

    @property
    def missing(self) -> list[str]:
        """What was not found, as asked for: local ids as text, then refs."""
        return [str(i) for i in self.missing_ids] + self.missing_refs

    def wire(self) -> list[dict[str, Any]]:
        """The observations found as JSON (a colleague's with ``teamSnapshot``)."""
        return [o.model_dump(by_alias=True) for o in self.observations]
