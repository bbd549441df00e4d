"""The spool: events a hook could not deliver, one file each, replayed later. Stdlib only.

Layout under ``<data_dir>/spool/`` (directories 0700: events hold cwd, project names, ids):
- ``<time-ordered-id>.json``: one envelope. The id starts with nanoseconds since the epoch, so a
  plain filename sort is capture order.
- ``<id>.json.tmp``: being written. It is chmod 0600 and then ``os.replace``d to its final
  name, so a crash leaves a ``.tmp`` straggler that readers ignore, never a half event.
- ``processed/``: delivered envelopes, pruned after a retention window.
- ``rejected/``: envelopes the service refused as invalid (kept for a person to look at,
  never replayed forever), whether a hook got the 4xx or replay found the envelope invalid;
  a hook's envelope carries the service's answer in ``reason``.

The envelope carries ``envelope_version`` and the event's idempotency key, because the spool
outlives code versions and a replay of an event the service did receive must be a no-op.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

# ``typing``, ``dataclasses`` and ``secrets`` cost ~4, ~11 and ~7 ms to import, on a path that
# runs at every tool call (measured by bench/hooks.py): annotations stay strings, Envelope is
# a plain slotted class, and the random part of a key comes from ``os.urandom``.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENVELOPE_VERSION = 1
SUFFIX = ".json"
PROCESSED = "processed"
REJECTED = "rejected"


class Envelope:
    """One spooled event: which route it was meant for and the body it would have sent."""

    __slots__ = (
        "body",
        "envelope_version",
        "event_key",
        "hook",
        "path",
        "reason",
        "spooled_at_ns",
    )

    def __init__(
        self,
        event_key: str,
        path: str,
        body: dict[str, Any],
        hook: str = "",
        spooled_at_ns: int = 0,
        envelope_version: int = ENVELOPE_VERSION,
        reason: str = "",
    ) -> None:
        self.event_key = event_key
        self.path = path
        self.body = body
        self.hook = hook
        self.spooled_at_ns = spooled_at_ns
        self.envelope_version = envelope_version
        self.reason = reason  # why it was rejected; "" for a pending envelope

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Envelope) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"Envelope(event_key={self.event_key!r}, path={self.path!r}, hook={self.hook!r})"

    def to_json(self) -> str:
        data = {
            "envelope_version": self.envelope_version,
            "event_key": self.event_key,
            "path": self.path,
            "body": self.body,
            "hook": self.hook,
            "spooled_at_ns": self.spooled_at_ns,
        }
        if self.reason:
            data["reason"] = self.reason
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Envelope:
        """Parse an envelope; ``ValueError`` names what is wrong with it."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("envelope is not a JSON object")
        version = data.get("envelope_version")
        if version != ENVELOPE_VERSION:
            raise ValueError(f"unsupported envelope_version {version!r}")
        key, path, body = data.get("event_key"), data.get("path"), data.get("body")
        if not isinstance(key, str) or not key:
            raise ValueError("envelope has no event_key")
        if not isinstance(path, str) or not path.startswith("/api/"):
            raise ValueError(f"envelope path {path!r} is not an /api/ route")
        if not isinstance(body, dict):
            raise ValueError("envelope body is not a JSON object")
        return cls(
            event_key=key,
            path=path,
            body=body,
            hook=str(data.get("hook") or ""),
            spooled_at_ns=int(data.get("spooled_at_ns") or 0),
            reason=str(data.get("reason") or ""),
        )


def new_event_key() -> str:
    """A time-ordered unique id: 20-digit nanoseconds, then 12 random hex digits."""
    return f"{time.time_ns():020d}-{os.urandom(6).hex()}"


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def write(spool_dir: Path, envelope: Envelope) -> Path:
    """Spool one envelope atomically with owner-only permissions; return its final path.

    The bytes are made before the temp file exists, and any failure after it exists (disk
    full, a short write, an interrupt) removes it before re-raising: a failed write leaves
    nothing behind, never a 0-byte ``.tmp``.
    """
    data = envelope.to_json().encode("utf-8")  # fails (bad text) before touching the disk
    _private_dir(spool_dir)
    final = spool_dir / f"{envelope.event_key}{SUFFIX}"
    tmp = spool_dir / f"{envelope.event_key}{SUFFIX}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:  # os.write may write less than asked (a nearly full disk)
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return final


def pending(spool_dir: Path) -> list[Path]:
    """Spooled envelopes in capture order (``.tmp`` stragglers are ignored)."""
    return [spool_dir / name for name in pending_names(spool_dir)]


def pending_names(spool_dir: Path) -> list[str]:
    """The file names of ``pending``: one directory scan, no stat per file (the service asks
    before every live hook event whether anything waits here)."""
    try:
        with os.scandir(spool_dir) as entries:
            return sorted(e.name for e in entries if e.name.endswith(SUFFIX) and e.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def mark(path: Path, outcome: str, replacement: Envelope | None = None) -> Path:
    """Move a handled envelope to ``processed/`` or ``rejected/`` (same filesystem, atomic).

    With ``replacement`` (the envelope as replay cleaned it: an old hook's file may hold a
    ``<private>`` block) that is written there instead, and the original removed, so private
    text does not outlive the replay in ``processed/``.
    """
    target_dir = _private_dir(path.parent / outcome)
    if replacement is not None:
        written = write(target_dir, replacement)
        path.unlink()
        return written
    target = target_dir / path.name
    os.replace(path, target)
    return target


def prune(spool_dir: Path, retention_days: float, now: float | None = None) -> int:
    """Delete processed envelopes older than the retention window; return how many."""
    folder = spool_dir / PROCESSED
    if not folder.is_dir():
        return 0
    cutoff = (now if now is not None else time.time()) - retention_days * 86400
    removed = 0
    for item in folder.iterdir():
        try:
            if item.stat().st_mtime < cutoff:
                item.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def backlog(spool_dir: Path) -> dict[str, int]:
    """Counts for status pages: pending, rejected, processed."""
    counts = {"pending": len(pending(spool_dir))}
    for name in (REJECTED, PROCESSED):
        folder = spool_dir / name
        counts[name] = sum(1 for _ in folder.iterdir()) if folder.is_dir() else 0
    return counts
