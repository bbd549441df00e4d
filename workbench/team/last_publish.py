"""The outcome of the last publishing run, kept in ``<data dir>/team_publish.json``.

Why a file: publishing runs in the service (``team_publish_on_stop``, see
``workbench/team/autopublish.py``) or from ``workbench publish``, and ``workbench team status``
is another process that must show when it last ran, what it added and why it failed. The
file is replaced atomically (write to a temp file, ``os.replace``), so a reader never sees
half of it; a missing or unreadable file just means "never published from here".
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.clock import iso_from_ms, now_ms

if TYPE_CHECKING:
    from workbench.settings import Settings
    from workbench.team.publish import PublishResult

FILENAME = "team_publish.json"


def path(settings: Settings) -> Path:
    return settings.data_dir / FILENAME


def record(
    settings: Settings,
    trigger: str,
    *,
    result: PublishResult | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """Store one run's outcome (``result`` on success, ``error`` on failure); return it."""
    at = now_ms()
    entry: dict[str, Any] = {
        "at": iso_from_ms(at),
        "at_epoch_ms": at,
        "trigger": trigger,
        "added": result.added if result else {},
        "tombstoned": result.tombstoned if result else 0,
        "snapshot": result.snapshot if result else None,
        "error": error,
    }
    target = path(settings)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".team_publish.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return entry


def read(settings: Settings) -> dict[str, Any] | None:
    """The last run's outcome, or None when nothing was published from this data dir."""
    try:
        value = json.loads(path(settings).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def describe(entry: dict[str, Any] | None) -> str:
    """One line for ``team status``: when, how, and what (or why it failed)."""
    if entry is None:
        return "never from this machine"
    head = f"{entry.get('at', '?')} ({entry.get('trigger', '?')})"
    if entry.get("error"):
        return f"{head} FAILED: {entry['error']}"
    rows = sum(int(v) for v in (entry.get("added") or {}).values())
    snapshot = entry.get("snapshot")
    where = f"snapshot {snapshot}" if snapshot is not None else "no change"
    return f"{head}: {rows} rows, {entry.get('tombstoned', 0)} tombstones, {where}"
