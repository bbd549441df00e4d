"""A memo of recent rankings' first observation: the timeline's anchor without a second search.

Why: search → timeline → fetch. An agent that searched "auth token refresh" and then asks for
the timeline of that query needs the search's first observation hit as the anchor, and
ranking it again was ~97% of a timeline by query's cost (13 ms quiet at 100k, against
0.35 ms around a known id). A cheaper anchor (full text alone) was measured and rejected on
quality (``bench/timeline_anchor.py``), so the anchor is kept exactly and reused instead.

What is remembered: for a query (stripped, as ranked) and a filter a timeline can ask (a
project, or none), the id a ranking put first (None: nothing matched). A search stores it
only when its first observation is the timeline's anchor by construction (``search``: hybrid
asked, relevance order, the first page, a depth that fuses as deep as the anchor's); the
timeline stores what it ranked itself. Nothing is stored when a part of the ranking failed
open (a vector ranker error, a second stage error), nor with Claude's rerank on (a network
call each time, which may fail open differently).

When it is valid: the ``generation`` it was ranked under is the current one (read *before*
the ranking, so a write during it leaves the entry under the older generation), and the
document frequencies the ranking used from ``fts``'s cache have not expired
(``fts.df_horizon``). The generation is everything else a ranking reads:

- ``observation_generation`` in the store: a trigger counts every insert, update and delete
  of an observation, whoever writes (new, edited, forgotten, imported, team-synced; m016);
- the vector ranker's ``generation()``: its state, its model, and the versions of its index
  and of the static tier (vectors added as the embedding worker catches up, a switch, a
  reindex). A ranker that cannot tell disables the memo;
- the settings, all of them (``PUT /api/settings`` applies ranking settings live);
- the second stage's files (``rerank.inputs``: a retrained or rebuilt model);
- ``fts.df_generation`` (a cached count replaced by another value, or the cache emptied).

No ranking step reads the clock (``query_dates`` resolves only explicit days; recency
features compare candidates with each other), so the time of day is not part of it.
When the generation changes the memo is emptied: no entry outlives the state it was ranked
on, and forgetting a memory (a delete) leaves nothing that could anchor on it.

Bounded: ``CAPACITY`` entries, least recently used first out; one lock (searches run on
several threads at once).
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from workbench.recall import fts, rerank
from workbench.recall.filters import SearchFilters

CAPACITY = 256  # a few hundred recent queries: an agent's searches of one session and more
Key = tuple[str, str | None]  # (query as ranked, project filter or None)
Generation = tuple[object, ...]


# Every filter field but ``project``, with its empty value: a timeline asks no other filter.
_UNFILTERED = {
    name: info.default for name, info in SearchFilters.model_fields.items() if name != "project"
}


def key_of(query: str | None, filters: SearchFilters) -> Key | None:
    """The memo's key for a ranking of ``query`` under ``filters``, or None when a timeline
    cannot ask it (no words, or a filter beyond one project)."""
    text = (query or "").strip()
    if not text or any(getattr(filters, k) != v for k, v in _UNFILTERED.items()):
        return None
    return (text, filters.project)


def generation_of(
    conn: sqlite3.Connection, ranker: object | None, settings: object | None
) -> Generation | None:
    """Everything a ranking reads besides the query and the filter (see the module docstring),
    or None when some part cannot be told (the memo is then not used)."""
    ranked_by: object = None
    if ranker is not None:
        tell = getattr(ranker, "generation", None)
        if not callable(tell):
            return None
        ranked_by = tell()
    row = conn.execute("SELECT n FROM observation_generation WHERE id = 1").fetchone()
    if row is None:
        return None
    return (
        int(row[0]),
        ranked_by,
        _settings_of(settings),
        rerank.inputs(settings),
        fts.df_generation(),
    )


def _settings_of(settings: object | None) -> tuple[object, ...] | None:
    """Every setting's value (a live change of any of them is a new generation); a list's
    as a tuple, so a later change in place cannot alter the copy."""
    if settings is None:
        return None
    if getattr(type(settings), "model_fields", None) is None:
        return (id(settings),)  # not a Settings model: only this very object
    return tuple(_frozen(v) for v in vars(settings).values())


def _frozen(value: Any) -> object:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    return value


@dataclass
class _Entry:
    first: int | None
    valid_until: float  # time.monotonic(): when a cached count the ranking used expires


@dataclass
class AnchorMemo:
    """The memo; one per service (``Runtime.anchors``), shared by every request's engine."""

    capacity: int = CAPACITY
    reused: int = 0  # timeline anchors taken from the memo
    ranked: int = 0  # timeline anchors that had to be ranked
    _generation: Generation | None = None
    _entries: OrderedDict[Key, _Entry] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, generation: Generation, key: Key) -> tuple[bool, int | None]:
        """``(True, first id or None)`` when ``key`` was ranked under ``generation`` and is
        still valid, else ``(False, None)``; counts the timeline's anchor as reused or
        ranked (the ranking follows a miss)."""
        now = time.monotonic()
        with self._lock:
            self._meet(generation)
            entry = self._entries.get(key)
            if entry is not None and now >= entry.valid_until:
                del self._entries[key]
                entry = None
            if entry is None:
                self.ranked += 1
                return False, None
            self._entries.move_to_end(key)
            self.reused += 1
            return True, entry.first

    def put(
        self, generation: Generation, key: Key, first: int | None, valid_until: float = math.inf
    ) -> None:
        """Remember that a ranking of ``key`` under ``generation`` put ``first`` first."""
        with self._lock:
            self._meet(generation)
            self._entries[key] = _Entry(first, valid_until)
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def _meet(self, generation: Generation) -> None:
        """Make ``generation`` the memo's, emptying it when it differs. (A ranking that began
        before a write and stores after it empties what was ranked since: a miss later,
        never a stale hit, as its own generation is not the current one.)"""
        if generation != self._generation:
            self._entries.clear()
            self._generation = generation

    def status(self) -> dict[str, int]:
        """``timelineAnchors`` in ``GET /api/index/status``."""
        with self._lock:
            return {
                "held": len(self._entries),
                "capacity": self.capacity,
                "reused": self.reused,
                "ranked": self.ranked,
            }
