"""Observations: a page newest first, one by id, many by ids (fetches feed the ledger)."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from fastapi import APIRouter

from service.deps import RuntimeDep
from service.params import ObservationIdPath
from service.routes.pagination import PageDep, page
from service.schemas import ObservationBatch
from workbench.errors import NotFound
from workbench.recall import ledger
from workbench.store import observations

log = logging.getLogger("workbench.service")
router = APIRouter(prefix="/api", tags=["observations"])


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
