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

Writes from other origins are refused before they get here (``LocalOriginOnly``).
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
from workbench import forget
from workbench.clock import iso_from_ms
from workbench.errors import NotFound, WorkbenchError
from workbench.knowledge import corpus
from workbench.recall import file_history, ledger
from workbench.recall.indexer import Indexer
from workbench.store import observations

log = logging.getLogger("workbench.service")
router = APIRouter(prefix="/api", tags=["observations"])

HISTORY_ROWS = 100
PathParam = Annotated[str, Query(min_length=1, max_length=4096)]
CwdParam = Annotated[str, Query(max_length=4096)]


@router.get("/observations")
def list_observations(runtime: RuntimeDep, params: PageDep) -> dict[str, Any]:
    conn = runtime.store.conn
    items, more = observations.list_page(
        conn,
        project=params.project,
        offset=params.offset,
        limit=params.limit,
        platform_source=params.platform_source,
    )
    return page(items, more, params)


@router.get("/observation/{observation_id}")
def get_observation(observation_id: ObservationIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    conn = runtime.store.conn
    obs = observations.get(conn, observation_id)
    if obs is None:
        raise NotFound(
            f"no observation with id {observation_id}; find ids with GET /api/search "
            "or GET /api/observations"
        )
    return obs.model_dump()


@router.post("/observations/batch")
def batch(body: ObservationBatch, runtime: RuntimeDep) -> list[dict[str, Any]]:
    conn = runtime.store.conn
    found = observations.get_many(
        conn, body.ids, order_by=body.orderBy, limit=body.limit, project=body.project
    )
    if body.source is not None or body.contentSessionId is not None:
        # Trigger: the caller said who asks. / Why: the ledger's "did the agent then ask for
        # it?" / Outcome: one fetches row per returned id; the response is unchanged, even
        # when the ledger write fails (logged: the records matter more than the accounting).
        try:
            ledger.record_fetches(
                conn,
                [o.id for o in found],
                source=body.source,
                content_session_id=body.contentSessionId,
            )
        except sqlite3.Error:
            log.exception("could not record %d fetches in the ledger", len(found))
    return [o.model_dump() for o in found]


@router.get("/observations/by-file")
def by_file(
    runtime: RuntimeDep,
    path: PathParam,
    cwd: CwdParam = "",
    limit: Annotated[int, Query(ge=1, le=file_history.MATCH_LIMIT)] = 100,
) -> dict[str, Any]:
    cands = file_history.candidates(path, cwd)
    hits = file_history.find(runtime.store.conn, cands, limit=limit)
    return {
        "path": path,
        "candidates": {"absolute": list(cands.absolute), "relative": list(cands.relative)},
        "project": cands.project,
        "count": len(hits),
        "observations": [
            {**h.observation.model_dump(), "fileAction": "modified" if h.modified else "read"}
            for h in hits
        ],
    }


# ----- delete -------------------------------------------------------------------------------
class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: Annotated[list[RowId], Field(min_length=1, max_length=1000)]


def _forget(runtime: Runtime, ids: list[int]) -> forget.ForgetReport:
    report = forget.forget(runtime.store.conn, runtime.settings.spool_dir, ids)
    indexer = runtime.indexer
    if report.deleted and indexer is not None:
        indexer.notify()  # its next pass drops the vectors and the cached embeddings
    for gone in report.deleted:
        runtime.bus.publish("observation_deleted", {"id": gone.id, "project": gone.project})
    return report


@router.delete("/observation/{observation_id}")
def delete_observation(observation_id: ObservationIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    report = _forget(runtime, [observation_id])
    if not report.deleted:
        raise NotFound(
            f"observation {observation_id} was already deleted"
            if report.already_deleted
            else f"no observation with id {observation_id}; find ids with GET /api/search"
        )
    gone = report.deleted[0]
    indexer = runtime.indexer
    return {
        "deleted": True,
        "id": gone.id,
        "project": gone.project,
        "eventId": gone.event_id,
        "vectors": _vector_state(indexer),
        "corpora": _corpora_holding(runtime, gone.id),
        **report.to_json(),
        "message": (
            f"observation {gone.id} deleted and its source scrubbed; it will not be derived "
            "or imported again. Corpora listed here still hold it until rebuilt."
        ),
    }


@router.post("/observations/forget")
def forget_observations(body: ForgetBody, runtime: RuntimeDep) -> dict[str, Any]:
    report = _forget(runtime, body.ids)
    indexer = runtime.indexer
    corpora = sorted({n for d in report.deleted for n in _corpora_holding(runtime, d.id)})
    return {
        **report.to_json(),
        "vectors": _vector_state(indexer) if report.deleted else "none",
        "corpora": corpora,
    }


def _vector_state(indexer: Indexer | None) -> str:
    if indexer is None:
        return "none"
    return "removing" if indexer.state == "ready" else "none"


def _corpora_holding(runtime: Runtime, observation_id: int) -> list[str]:
    """Names of corpora whose frozen copy still includes the observation."""
    found = []
    for name in corpus.names(runtime.settings):
        try:
            if observation_id in corpus.load(runtime.settings, name).ids():
                found.append(name)
        except WorkbenchError:
            continue  # an unreadable corpus is reported by GET /api/corpus, not here
    return found


# ----- injection history --------------------------------------------------------------------
@router.get("/observation/{observation_id}/injections")
def injection_history(observation_id: ObservationIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    conn = runtime.store.conn
    obs = observations.get(conn, observation_id)
    if obs is None:
        raise NotFound(f"no observation with id {observation_id}")
    totals = conn.execute(
        "SELECT count(*) AS n, count(DISTINCT j.content_session_id) AS sessions,"
        " min(j.created_at_epoch) AS first, max(j.created_at_epoch) AS last"
        " FROM injection_items i JOIN injections j ON j.id = i.injection_id"
        " WHERE i.observation_id = ?",
        (observation_id,),
    ).fetchone()
    by_kind = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT j.kind, count(*) FROM injection_items i JOIN injections j"
            " ON j.id = i.injection_id WHERE i.observation_id = ? GROUP BY j.kind",
            (observation_id,),
        )
    }
    recent = conn.execute(
        "SELECT j.id, j.kind, i.shown, j.content_session_id, j.project, j.tokens,"
        " j.created_at FROM injection_items i JOIN injections j ON j.id = i.injection_id"
        " WHERE i.observation_id = ? ORDER BY j.created_at_epoch DESC, j.id DESC LIMIT ?",
        (observation_id, HISTORY_ROWS),
    ).fetchall()
    fetches = conn.execute(
        "SELECT source, content_session_id, created_at FROM fetches WHERE observation_id = ?"
        " ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        (observation_id, HISTORY_ROWS),
    ).fetchall()
    fetch_count = conn.execute(
        "SELECT count(*) FROM fetches WHERE observation_id = ?", (observation_id,)
    ).fetchone()[0]
    return {
        "observationId": observation_id,
        "discoveryTokens": obs.discovery_tokens,
        "injected": {
            "count": totals["n"],
            "sessions": totals["sessions"],
            "byKind": by_kind,
            "first": _iso(totals["first"]),
            "last": _iso(totals["last"]),
            "items": [
                {
                    "injectionId": r["id"],
                    "kind": r["kind"],
                    "shown": r["shown"],
                    "contentSessionId": r["content_session_id"],
                    "project": r["project"],
                    "tokens": r["tokens"],
                    "createdAt": r["created_at"],
                }
                for r in recent
            ],
        },
        "fetched": {
            "count": fetch_count,
            "items": [
                {
                    "source": r["source"],
                    "contentSessionId": r["content_session_id"],
                    "createdAt": r["created_at"],
                }
                for r in fetches
            ],
        },
    }


def _iso(ms: int | None) -> str | None:
    return iso_from_ms(ms) if ms else None
