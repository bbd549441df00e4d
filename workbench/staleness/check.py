"""Which observations are stale: a cited file no longer holds the content the memory saw.

Stdlib only (``blobs``): the SessionStart hook builds its block from the store when the
service is cold, and marks stale rows the same way. Cost per cited file: one ``stat``; a file
whose size and mtime are the recorded ones is unchanged without being read, one of another
size is changed without being read; only a file of the same size with another mtime is
hashed, once per change (``blobs`` caches by stat signature in a long-lived process).

A store without the ``observation_evidence`` table (older schema) and an observation with no
evidence (saved by hand, captured before this feature, or citing no file) are "unknown":
absent from the answer, never stale.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

from workbench.staleness import blobs

TABLE = "observation_evidence"
_CHUNK = 500


@dataclass
class Staleness:
    """One observation's verdict: the cited files that changed since it was made."""

    changed: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return bool(self.changed)


def has_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
    ).fetchone()
    return row is not None


def file_changed(abs_path: str, blob: str | None, size: int, mtime_ns: int) -> bool:
    """True when the file no longer holds ``blob`` (None: it was absent)."""
    if blob is None:
        return blobs.state(abs_path).blob is not None
    seen = blobs.compare_stat(abs_path, size, mtime_ns)
    if seen == "same":
        return False
    # A file over ``MAX_HASH_BYTES`` was recorded by its signature: any size/mtime change is
    # a change. Below it, another size is a change without reading; same size, read and hash.
    if seen in ("gone", "resized") or size > blobs.MAX_HASH_BYTES:
        return True
    return blobs.state(abs_path).blob != blob


def check(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Staleness]:
    """``id -> Staleness`` for each id with evidence (ids without are absent: unknown)."""
    unique = list(dict.fromkeys(int(i) for i in ids))
    if not unique or not has_table(conn):
        return {}
    verdicts: dict[int, Staleness] = {}
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start : start + _CHUNK]
        rows = conn.execute(
            f"SELECT observation_id, path, abs_path, blob, size, mtime_ns FROM {TABLE}"
            f" WHERE observation_id IN ({','.join('?' * len(chunk))})"
            " ORDER BY observation_id, path",
            chunk,
        ).fetchall()
        for obs_id, path, abs_path, blob, size, mtime_ns in rows:
            verdict = verdicts.setdefault(int(obs_id), Staleness())
            if file_changed(str(abs_path), blob, int(size), int(mtime_ns)):
                verdict.changed.append(str(path))
    return verdicts


def stale_ids(conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
    """The ids among ``ids`` that are stale."""
    return {i for i, v in check(conn, ids).items() if v.stale}
