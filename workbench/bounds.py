"""The ranges a number from outside must fit before it reaches SQLite or ``datetime``.

Python integers are unbounded; SQLite's are signed 64-bit, and binding a larger one raises
``OverflowError`` (a 500 if it escapes a route). ``datetime`` covers the years 1 to 9999. The
boundaries (routes, filters, the timeline) check against these and answer with a message that
names the parameter, so no out-of-range number gets far enough to fault. Stdlib only.
"""

from __future__ import annotations

SQLITE_INT_MAX = 2**63 - 1  # the largest INTEGER SQLite stores (and the largest rowid)
EPOCH_MS_MIN = -62_135_596_800_000  # 0001-01-01T00:00:00.000Z
EPOCH_MS_MAX = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
