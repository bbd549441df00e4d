"""Timestamps as the store keeps them: ISO-8601 UTC text plus epoch milliseconds.

Both are stored because people read the first and range queries index the second.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_ms() -> int:
    """Milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


def iso_from_ms(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, e.g. ``2026-12-02T15:28:10.123Z``."""
    return (
        datetime.fromtimestamp(ms / 1000, tz=UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def ms_from_iso(text: str) -> int:
    """Parse an ISO date or datetime (``Z`` or offset; naive means UTC) to epoch ms.

    Raises ``ValueError`` with the accepted forms when the text is not a date.
    """
    value = text.strip()
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{text!r} is not an ISO date or timestamp; use e.g. 2026-12-01 or 2026-12-01T14:30:00Z"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)
