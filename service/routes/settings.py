"""``GET /api/settings`` / ``PUT /api/settings``: the settings the viewer edits.

GET answers the editable settings with their bounds. PUT writes a validated update to
settings.json (``write_settings_file``) and applies it live where the running service can;
the answer says what needs a restart and which keys an environment variable overrides. A bad
value is a 422 naming the field and the rule; a key that is not editable is a 400; a
settings.json that cannot be read is a 409 (it is never overwritten). Nothing is written
unless every value is valid; the old file is backed up.

Requests from other origins are refused before they get here (``service.origin.OwnOriginOnly``).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body
from pydantic import ValidationError

from service.deps import RuntimeDep
from workbench import settings_edit
from workbench.api_models.settings import SettingsChanged, SettingsView
from workbench.errors import WorkbenchError
from workbench.settings import SettingsFileUnreadable, write_settings_file

log = logging.getLogger("workbench.service")
router = APIRouter(prefix="/api", tags=["settings"])


class InvalidSettings(WorkbenchError):
    status_code = 422
    code = "INVALID_SETTINGS"


class SettingNotEditable(WorkbenchError):
    code = "SETTING_NOT_EDITABLE"


# ----- settings -----------------------------------------------------------------------------
@router.get("/settings", response_model=SettingsView)
def get_settings(runtime: RuntimeDep) -> dict[str, Any]:
    settings = runtime.settings
    fields = settings_edit.describe(settings)
    return {
        "settings": {f["name"]: f["value"] for f in fields},
        "fields": fields,
        "file": str(settings.settings_path),
        "warnings": settings.load_warnings,
    }


@router.put("/settings", response_model=SettingsChanged)
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
