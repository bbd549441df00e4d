"""Durations written as a number and a unit: 30s, 15m, 12h, 7d, 2w. Standard library only.

Used by ``team_snapshot_retention`` (``workbench/settings.py``) and ``team maintain
--older-than``, so both accept and refuse the same spellings with the same message.
"""

from __future__ import annotations

import re

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*([0-9]{1,12}(?:\.[0-9]{1,9})?)\s*([smhdw])\s*$", re.ASCII)
MAX_SECONDS = 100 * 365 * 86400  # a century: anything longer is a typo


def parse_seconds(text: str) -> float:
    """``"7d"`` → 604800.0; ValueError saying how to write one otherwise."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(
            f"{text!r} is not a duration; write a number and a unit: 0s, 30s, 15m, 12h, 7d, 2w"
        )
    seconds = float(match.group(1)) * UNITS[match.group(2)]
    if seconds > MAX_SECONDS:
        raise ValueError(f"{text!r} is longer than a century; write e.g. 7d or 52w")
    return seconds


def check_duration(text: str) -> str:
    """The duration as written (trimmed), once ``parse_seconds`` accepts it."""
    parse_seconds(text)
    return text.strip()
