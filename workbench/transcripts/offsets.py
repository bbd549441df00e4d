"""The read position of each transcript file (``transcript_offsets``, migration m013).

A position is only trusted for the same file: its inode and the hash of its first
``head_bytes`` must still match. A file replaced (rotated, rewritten by an editor, a session
file recreated under the same name) or cut shorter than the offset starts again at 0; its
events keep their keys, so reading it again stores nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from workbench.clock import now_ms

HEAD_BYTES = 4096


@dataclass
class Mark:
    """Where reading ``path`` stopped, and what the file looked like there."""

    path: str
    platform: str
    inode: int
    head_bytes: int
    head_sha256: str
    offset: int
    state: dict[str, Any] = field(default_factory=dict)


def head(stream: BinaryIO, size: int) -> tuple[int, str]:
    """``(n, sha256)`` of the file's first ``n = min(size, HEAD_BYTES)`` bytes."""
    stream.seek(0)
    data = stream.read(min(size, HEAD_BYTES))
    return len(data), hashlib.sha256(data).hexdigest()


def load(conn: sqlite3.Connection, path: str) -> Mark | None:
    row = conn.execute(
        "SELECT platform, inode, head_bytes, head_sha256, offset, state"
        " FROM transcript_offsets WHERE path = ?",
        (path,),
    ).fetchone()
    if row is None:
        return None
    try:
        state = json.loads(row[5])
    except ValueError:
        state = {}
    return Mark(
        path, row[0], row[1], row[2], row[3], row[4], state if isinstance(state, dict) else {}
    )


def save(conn: sqlite3.Connection, mark: Mark) -> None:
    conn.execute(
        "INSERT INTO transcript_offsets (path, platform, inode, head_bytes, head_sha256,"
        " offset, state, updated_at_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (path) DO UPDATE SET platform = excluded.platform,"
        " inode = excluded.inode, head_bytes = excluded.head_bytes,"
        " head_sha256 = excluded.head_sha256, offset = excluded.offset,"
        " state = excluded.state, updated_at_epoch = excluded.updated_at_epoch",
        (
            mark.path,
            mark.platform,
            mark.inode,
            mark.head_bytes,
            mark.head_sha256,
            mark.offset,
            json.dumps(mark.state, ensure_ascii=False),
            now_ms(),
        ),
    )


def still_valid(mark: Mark, stream: BinaryIO, stat: os.stat_result) -> bool:
    """True when ``mark`` is a position in this same file (not rotated, not rewritten)."""
    if mark.inode != stat.st_ino or stat.st_size < mark.offset:
        return False
    if stat.st_size < mark.head_bytes:
        return False
    stream.seek(0)
    data = stream.read(mark.head_bytes)
    return hashlib.sha256(data).hexdigest() == mark.head_sha256
