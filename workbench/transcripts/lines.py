"""Whole lines of a growing file, from a byte offset, in bounded memory.

A transcript is appended to while the agent runs, so its last line may be half written: a
line counts only once its newline is there, and the caller's offset stays before it until
then. A line longer than the limit (a tool output of hundreds of megabytes) is skipped and
reported (``data is None``) without ever being held whole: reading continues in chunks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

CHUNK = 1 << 20


@dataclass(frozen=True)
class Line:
    """One complete line: where it starts, where the next one starts, its bytes (no newline);
    ``data`` is None when the line was longer than the limit and was skipped."""

    start: int
    end: int
    data: bytes | None


def read_lines(stream: BinaryIO, start: int, max_bytes: int) -> Iterator[Line]:
    """Every complete line of ``stream`` from byte ``start``, in order.

    Each chunk is scanned with an index (no copy per line): only the unfinished tail of a
    chunk is carried into the next one.
    """
    stream.seek(start)
    line_start = start
    buffer = b""
    too_long = False  # the current line passed max_bytes: its bytes are being dropped
    dropped = 0
    while chunk := stream.read(CHUNK):
        buffer += chunk
        at = 0
        while (cut := buffer.find(b"\n", at)) >= 0:
            end = line_start + dropped + (cut - at) + 1
            data = None if too_long or cut - at > max_bytes else buffer[at:cut]
            yield Line(line_start, end, data)
            at = cut + 1
            line_start, dropped, too_long = end, 0, False
        buffer = buffer[at:]
        if len(buffer) > max_bytes:
            dropped += len(buffer)
            buffer = b""
            too_long = True
