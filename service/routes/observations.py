"""Observations: a page newest first, one by id, many by ids."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.deps import RuntimeDep
from service.routes.pagination import PageDep, page
from service.schemas import ObservationBatch
from workbench.errors import NotFound
from workbench.store import observations

router = APIRouter(prefix="/api", tags=["observations"])


@router.get("/observations")
def list_observations(runtime: RuntimeDep, params: PageDep) -> dict[str, Any]:
    conn = runtime.store.conn
    items, more = observations.list_page(
        conn, project=params.project, offset=params.offset, limit=params.limit
    )
    return page(items, more, params)


@router.get("/observation/{observation_id}")
def get_observation(observation_id: int, runtime: RuntimeDep) -> dict[str, Any]:
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
    return [o.model_dump() for o in found]
