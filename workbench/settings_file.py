"""settings.json on disk: read it strictly or leniently, and back it up before a write.

Stdlib plus ``workbench.errors``: ``workbench.settings`` builds ``Settings`` on top. Each
refusal names the file and the fix, for the 409 of ``PUT /api/settings`` and for the load
warning alike; ``why`` is the short reason the capture-paused line quotes.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

# Backups of settings.json kept beside it (``settings.json.<UTC time>.bak``); older ones go.
KEEP_BACKUPS = 20


class SettingsFileUnreadable(WorkbenchError):
    """settings.json exists but cannot be read as a JSON object: never overwritten blindly."""

    status_code = 409
    code = "SETTINGS_FILE_UNREADABLE"

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message, why=why)
        self.why = why  # the short reason, e.g. "is a directory", for the capture-paused line


def parse_settings_file(path: Path) -> dict[str, Any]:
    """settings.json as a dict (``{}`` when absent); ``SettingsFileUnreadable`` otherwise.

    Each message names the file and the fix, for the PUT refusal and the load warning alike.
    """
    if path.is_dir():
        raise SettingsFileUnreadable(
            f"settings path {path} is a directory, not a JSON file: move it away "
            f"(`mv {path} {path}.dir`) or delete it, then restart the service",
            "is a directory",
        )
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise SettingsFileUnreadable(
            f"settings file {path} cannot be read ({reason}): fix or delete the file and "
            "restart the service",
            f"cannot be read ({reason})",
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsFileUnreadable(
            f"settings file is not valid JSON: {path} ({exc}): fix or delete the file and "
            "restart the service",
            "is not valid JSON",
        ) from None
    if not isinstance(data, dict):
        raise SettingsFileUnreadable(
            f"settings file must hold a JSON object: {path}: fix or delete the file and "
            "restart the service",
            "does not hold a JSON object",
        )
    data.pop("data_dir", None)  # the file lives in the data dir; it cannot move it
    return data


def read_settings_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Parse settings.json; return (values, warnings). Never raises for a bad file."""
    values, warnings, _ = read_leniently(path)
    return values, warnings


def read_leniently(path: Path) -> tuple[dict[str, Any], list[str], str | None]:
    """(values, warnings, why the file is unreadable or None)."""
    try:
        return parse_settings_file(path), [], None
    except SettingsFileUnreadable as exc:
        return {}, [f"{exc.message}. Using defaults meanwhile."], exc.why


def backup_settings_file(path: Path) -> Path | None:
    """Copy settings.json to ``settings.json.<UTC time>.bak`` beside it; keep the newest few."""
    if not path.is_file():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    backup = path.with_name(f"{path.name}.{stamp}.bak")
    shutil.copy2(path, backup)
    for old in sorted(path.parent.glob(f"{path.name}.*.bak"))[:-KEEP_BACKUPS]:
        old.unlink(missing_ok=True)
    return backup
