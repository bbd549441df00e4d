"""Timestamps as the store keeps them: ISO-8601 UTC text plus epoch milliseconds.

Both are stored because people read the first and range queries index the second.

``replayed_clock`` is the one hook for replaying history: the demo generator feeds weeks of
recorded sessions through the real ingest path and needs each row stamped with the time the
session happened, not the time of the replay. It is a context variable, so it only affects
the code running inside the ``with`` block, in that thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime

from workbench.bounds import EPOCH_MS_MAX, EPOCH_MS_MIN

_source: ContextVar[Callable[[], int] | None] = ContextVar("workbench_clock", default=None)


def now_ms() -> int:
    """Milliseconds since the epoch (or the replayed time inside ``replayed_clock``)."""
    source = _source.get()
    if source is not None:
        return source()
    return time.time_ns() // 1_000_000


@contextmanager
def replayed_clock(source: Callable[[], int]) -> Iterator[None]:
    """Make ``now_ms()`` return ``source()`` inside the block (replaying recorded history)."""
    token = _source.set(source)
    try:
        yield
    finally:
        _source.reset(token)


def iso_from_ms(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, e.g. ``2026-12-02T15:28:10.123Z``."""
    return (
        datetime.fromtimestamp(ms / 1000, tz=UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def minute_from_ms(ms: int) -> str:
    """``2026-12-01 14:30``: the UTC minute people read in tables and compact indexes.

    ``time.gmtime`` of the whole second, not ``datetime``: a search page prints one per hit
    (up to 300), and this is the same text at half the cost. Outside the years 1–9999 (no
    stored time is) the ``datetime`` form answers, with its own error.
    """
    if not EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ms // 1000))


def ms_from_iso(text: str) -> int:
    """Parse an ISO date or datetime (``Z`` or offset; naive means UTC) to epoch ms.

    Raises ``ValueError`` with the accepted forms when the text is not a date, or names a
    moment outside the years 1–9999 once moved to UTC (``9999-12-31T23:59-01:00``), which
    ``iso_from_ms`` could not show again.
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
    ms = int(parsed.timestamp() * 1000)
    if not EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX:
        raise ValueError(
            f"{text!r} falls outside the years 1 to 9999 in UTC; use a time within them"
        )
    return ms
