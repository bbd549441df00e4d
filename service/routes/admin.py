"""Memory hygiene and settings: what the viewer's delete, history and settings views call.

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
- ``GET /api/settings`` / ``PUT /api/settings``: the editable settings with their bounds, and
  a validated update written to settings.json (``write_settings_file``) and applied live
  where the running service can; the answer says what needs a restart and which keys an
  environment variable overrides. A bad value is a 422 naming the field and the rule; a key
  that is not editable is a 400; a settings.json that cannot be read is a 409 (it is never
  overwritten). Nothing is written unless every value is valid; the old file is backed up.

Writes from other origins are refused before they get here (``LocalOriginOnly``).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.deps import RuntimeDep
from service.params import ObservationIdPath, RowId
from workbench import forget, settings_edit
from workbench.clock import iso_from_ms
from workbench.errors import NotFound, WorkbenchError
from workbench.knowledge import corpus
from workbench.settings import SettingsFileUnreadable, write_settings_file
from workbench.store import observations

log = logging.getLogger("workbench.service")
router = APIRouter(prefix="/api", tags=["admin"])

HISTORY_ROWS = 100


class InvalidSettings(WorkbenchError):
    status_code = 422
    code = "INVALID_SETTINGS"


class SettingNotEditable(WorkbenchError):
    code = "SETTING_NOT_EDITABLE"


# ----- delete -------------------------------------------------------------------------------
class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: Annotated[list[RowId], Field(min_length=1, max_length=1000)]


def _forget(runtime: Any, ids: list[int]) -> forget.ForgetReport:
    report = forget.forget(runtime.store.conn, runtime.settings.spool_dir, ids)
    indexer = getattr(runtime, "indexer", None)
    if report.deleted and indexer is not None:
        indexer.notify()  # its next pass drops the vectors and the cached embeddings
    for gone in report.deleted:
        runtime.bus.publish("observation_deleted", {"id": gone.id, "project": gone.project})
    publisher = getattr(runtime, "team_publisher", None)
    if publisher is not None and any(publisher.wants(d.project) for d in report.deleted):
        # A forgotten row may be published: its tombstone should not wait for a session end.
        publisher.request()
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
    indexer = getattr(runtime, "indexer", None)
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
    indexer = getattr(runtime, "indexer", None)
    corpora = sorted({n for d in report.deleted for n in _corpora_holding(runtime, d.id)})
    return {
        **report.to_json(),
        "vectors": _vector_state(indexer) if report.deleted else "none",
        "corpora": corpora,
    }


def _vector_state(indexer: Any) -> str:
    if indexer is None:
        return "none"
    return "removing" if getattr(indexer, "state", "") == "ready" else "none"


def _corpora_holding(runtime: Any, observation_id: int) -> list[str]:
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


# ----- settings -----------------------------------------------------------------------------
@router.get("/settings")
def get_settings(runtime: RuntimeDep) -> dict[str, Any]:
    settings = runtime.settings
    fields = settings_edit.describe(settings)
    return {
        "settings": {f["name"]: f["value"] for f in fields},
        "fields": fields,
        "file": str(settings.settings_path),
        "warnings": settings.load_warnings,
    }


@router.put("/settings")
def put_settings(
    runtime: RuntimeDep, body: Annotated[Any, Body(description="{setting: value, …}")]
) -> dict[str, Any]:
    settings = runtime.settings
    try:
        updates = settings_edit.validate(settings, body)
    except settings_edit.SettingsRefused as exc:
        error = SettingNotEditable if exc.unknown else InvalidSettings
        raise error(f"settings not changed: {exc}", errors=exc.problems) from None
    try:
        write_settings_file(settings, updates)
    except SettingsFileUnreadable as exc:  # a 409: the user's file is never overwritten blindly
        raise SettingsFileUnreadable(f"settings not changed: {exc.message}", exc.why) from None
    except ValidationError as exc:
        # Trigger: the file already held a bad value for another key. / Why: merging would
        # write it back as if we had checked it. / Outcome: refuse, and name that key.
        problems = [
            {"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in exc.errors()
        ]
        raise InvalidSettings(
            f"settings not changed: {settings.settings_path} holds invalid values "
            f"({'; '.join(p['field'] + ': ' + p['message'] for p in problems)}); fix or "
            "delete them first",
            errors=problems,
        ) from None
    outcome = settings_edit.apply(settings, updates)
    log.info("settings changed: %s", outcome.message())
    runtime.bus.publish("settings_changed", {"keys": sorted(updates)})
    return {
        "saved": outcome.saved,
        "applied": outcome.applied,
        "restartRequired": outcome.restart_required,
        "overridden": outcome.overridden,
        "message": outcome.message(),
        "settings": {f["name"]: f["value"] for f in settings_edit.describe(settings)},
    }
