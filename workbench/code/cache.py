"""Parsed files kept in memory by path, size and mtime, so repeated searches skip parsing.

The MCP server lives for a whole agent session and the agent searches the same tree again
and again; re-parsing 2,000 unchanged files each time is most of a search's cost. An entry
is reused only while the file's size and modification time (ns) are unchanged, and the
cache holds at most ``MAX_ENTRIES`` files (oldest use dropped first). A CLI run is one
process per command, so there it only helps within one search.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from threading import Lock

from workbench.code.symbols import ParsedFile

MAX_ENTRIES = 20_000

Key = tuple[str, int, int, str]
_entries: OrderedDict[Key, ParsedFile] = OrderedDict()
_lock = Lock()


def key(path: Path, size: int, mtime_ns: int, shown: str) -> Key:
    return (str(path), size, mtime_ns, shown)


def get(entry: Key) -> ParsedFile | None:
    with _lock:
        parsed = _entries.get(entry)
        if parsed is not None:
            _entries.move_to_end(entry)
        return parsed


def put(entry: Key, parsed: ParsedFile) -> None:
    with _lock:
        _entries[entry] = parsed
        _entries.move_to_end(entry)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)


def clear() -> None:
    with _lock:
        _entries.clear()
