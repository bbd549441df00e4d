"""Observations: every route about them.

- ``GET /api/observations``: a page, newest first; ``GET /api/observation/{id}``: one;
  ``POST /api/observations/batch``: many by ids (a caller that says who asks feeds the
  ledger's fetches).
- ``GET /api/observations/by-file?path=&cwd=&limit=``: every observation that read or modified
  the file (absolute and cwd-relative candidates), newest first; a query, so it writes nothing.
- ``DELETE /api/observation/{id}`` forgets one observation for good (``workbench.forget``):
  the row (FTS follows by trigger), a tombstone so neither ``recompress`` nor an import
  brings it back, its source event's payload scrubbed to a hash (recorded in the log), the
  spool copies of that event, then the file purged (FTS merged, VACUUM, WAL truncated); its
  vector and cached embedding go on the indexer's next pass (woken here), and live pages are
  told (``observation_deleted``). The answer says what was scrubbed. Corpora still holding
  it are named; their next ``rebuild`` drops it.
- ``POST /api/observations/forget`` ``{"ids": [...]}``: the same for many ids, with one
  purge (``workbench forget``); ids not found or already deleted are listed, not refused.
- ``GET /api/observation/{id}/injections``: how often the observation was injected (by kind,
  into how many sessions, when) and when it was fetched later, from the injection ledger.

Requests from other origins are refused before they get here (``service.origin.OwnOriginOnly``).
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from service.deps import RuntimeDep
from service.pagination import PageDep, page
from service.params import ObservationIdPath, RowId
from service.runtime import Runtime
from service.schemas import ObservationBatch
from workbench.api_models.forget import Deleted, Forgotten
from workbench.api_models.ledger import InjectionHistory
from workbench.api_models.observations import (
    FileObservation,
    ObservationsByFile,
    ObservationView,
    PathCandidates,
)
from workbench.api_models.pages import Page
from workbench.errors import NotFound
from workbench.knowledge import corpus
from workbench.models import Observation
from workbench.recall import file_history, ledger
from workbench.recall.search import SearchEngine
from workbench.sources.local import LocalSource
from workbench.sources.source import GetAsk
from workbench.store import observations

log = logging.getLogger("workbench.service")
router = APIRouter(prefix="/api", tags=["observations"])

PathParam = Annotated[str, Query(min_length=1, max_length=4096)]
CwdParam = Annotated[str, Query(max_length=4096)]


@router.get("/observations")
def list_observations(runtime: RuntimeDep, params: PageDep) -> Page[Observation]:
    conn = runtime.store.conn
    items, more = observations.list_page(
        conn,
        where=params.where("observations"),
        offset=params.offset,
        limit=params.limit,
    )
    return page(items, more, params)


def local_source(runtime: Runtime) -> LocalSource:
    """The service's store as a source (``get`` reads no vectors: no ranker needed)."""
    return LocalSource(SearchEngine(runtime.store, runtime.settings))


@router.get("/observation/{observation_id}")
def get_observation(observation_id: ObservationIdPath, runtime: RuntimeDep) -> ObservationView:
    found = local_source(runtime).get(GetAsk(ids=(observation_id,))).mine
    if not found:
        raise NotFound(
            f"no observation with id {observation_id}; find ids with GET /api/search "
            "or GET /api/observations"
        )
    return found[0]


@router.post("/observations/batch")
def batch(body: ObservationBatch, runtime: RuntimeDep) -> list[ObservationView]:
    ask = GetAsk(ids=tuple(body.ids), order_by=body.orderBy, limit=body.limit, project=body.project)
    found = local_source(runtime).get(ask).mine
    if body.source is not None or body.contentSessionId is not None:
        # Trigger: the caller said who asks. / Why: the ledger's "did the agent then ask for
        # it?" / Outcome: one fetches row per returned id; the response is unchanged, even
        # when the ledger write fails (logged: the records matter more than the accounting).
        try:
            ledger.record_fetches(
                runtime.store.conn,
                [o.id for o in found],
                source=body.source,
                content_session_id=body.contentSessionId,
            )
        except sqlite3.Error:
            log.exception("could not record %d fetches in the ledger", len(found))
    return found


@router.get("/observations/by-file")
def by_file(
    runtime: RuntimeDep,
    path: PathParam,
    cwd: CwdParam = "",
    limit: Annotated[int, Query(ge=1, le=file_history.MATCH_LIMIT)] = 100,
) -> ObservationsByFile:
    cands = file_history.candidates(path, cwd)
    hits = file_history.find(runtime.store.conn, cands, limit=limit)
    return ObservationsByFile(
        path=path,
        candidates=PathCandidates(absolute=list(cands.absolute), relative=list(cands.relative)),
        project=cands.project,
        count=len(hits),
        observations=[
            FileObservation.model_validate(
                {**h.observation.model_dump(), "file_action": "modified" if h.modified else "read"}
            )
            for h in hits
        ],
    )


# ----- delete -------------------------------------------------------------------------------
class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: Annotated[list[RowId], Field(min_length=1, max_length=1000)]


@router.delete("/observation/{observation_id}", response_model=Deleted)
def delete_observation(observation_id: ObservationIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    report = runtime.forget([observation_id])
    if not report.deleted:
        raise NotFound(
            f"observation {observation_id} was already deleted"
            if report.already_deleted
            else f"no observation with id {observation_id}; find ids with GET /api/search"
        )
    gone = report.deleted[0]
    return {
        "deleted": True,
        "id": gone.id,
        "project": gone.project,
        "eventId": gone.event_id,
        "vectors": runtime.vectors_after_forget(),
        "corpora": corpus.holding(runtime.settings, [gone.id]),
        **report.to_json(),
        "message": (
            f"observation {gone.id} deleted and its source scrubbed; it will not be derived "
            "or imported again. copies lists every other place that held its words: cleaned, "
            "or not and how to remove them."
        ),
    }


@router.post("/observations/forget", response_model=Forgotten)
def forget_observations(body: ForgetBody, runtime: RuntimeDep) -> dict[str, Any]:
    report = runtime.forget(body.ids)
    return {
        **report.to_json(),
        "vectors": runtime.vectors_after_forget() if report.deleted else "none",
        "corpora": corpus.holding(runtime.settings, [d.id for d in report.deleted]),
    }


# ----- injection history --------------------------------------------------------------------
@router.get("/observation/{observation_id}/injections", response_model=InjectionHistory)
def injection_history(observation_id: ObservationIdPath, runtime: RuntimeDep) -> InjectionHistory:
    found = ledger.history(runtime.store.conn, observation_id)
    if found is None:
        raise NotFound(f"no observation with id {observation_id}")
    return InjectionHistory.model_validate(found)
