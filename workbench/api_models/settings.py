"""``GET /api/settings`` and ``PUT /api/settings``: the settings the viewer edits."""

from __future__ import annotations

from typing import Any

from workbench.api_models.base import CamelModel


class SettingsView(CamelModel):
    """Every editable setting's value, and per key its type, bounds, default and source."""

    settings: dict[str, Any]
    fields: list[dict[str, Any]]
    file: str
    warnings: list[str]


class SettingsChanged(CamelModel):
    """What an accepted update did: saved, applied now, waiting for a restart, overridden."""

    saved: dict[str, Any]
    applied: list[str]
    restart_required: list[str]
    overridden: dict[str, str]
    message: str
    settings: dict[str, Any]
