"""The compact text forms of a search and of a timeline, for agents and terminals.

Layer 1 of search → timeline → fetch must be cheap to read: one line per hit (about 20–40
tokens: id, time, type, title, token estimate), grouped by kind, with a one-line header and a
footer that says how to go deeper. The full records are one ``POST /api/observations/batch``
away, and the ``~N tokens`` figure tells the reader what each fetch will cost.

Summary ids print as ``S<id>`` (the timeline accepts that form as an anchor) and prompt ids as
``P<id>``. Titles are folded to one line so a stored title can never pose as a line of ours.
Times are UTC, the zone the store keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from workbench.clock import minute_from_ms
from workbench.recall.hits import RecordRef, SearchHit
from workbench.recall.tier_note import vectors_note
from workbench.recall.timeline import Timeline

_PREFIX = {"observation": "#", "summary": "#S", "prompt": "#P"}
_GROUPS = (
    ("observations", "Observations"),
    ("sessions", "Session summaries"),
    ("prompts", "Prompts"),
)
NEXT_STEPS = (
    "Next: GET /api/timeline?anchor=<id> (or S<id>) shows what happened around a hit; "
    'POST /api/observations/batch {"ids": [..]} returns full observations - fetch only the '
    "ids you need."
)


class IndexPage(Protocol):
    """What the index reads of a search: ``recall.search.SearchResult`` or a source's reply."""

    @property
    def query(self) -> str | None: ...
    @property
    def mode(self) -> str: ...
    @property
    def order_by(self) -> str: ...
    @property
    def degraded(self) -> str | None: ...
    @property
    def vectors_behind(self) -> int | None: ...
    @property
    def vectors_static(self) -> int | None: ...
    @property
    def vectors_rebuilding(self) -> tuple[int, int] | None: ...
    @property
    def observations(self) -> Sequence[SearchHit]: ...
    @property
    def sessions(self) -> Sequence[SearchHit]: ...
    @property
    def prompts(self) -> Sequence[SearchHit]: ...
    @property
    def total(self) -> int: ...


def when(epoch_ms: int) -> str:
    return minute_from_ms(epoch_ms)


def one_line(text: str) -> str:
    return " ".join(text.split())


def ref_line(ref: RecordRef, *, marker: str = "", rankers: list[str] | None = None) -> str:
    """``#123  2026-12-01 14:30  bugfix  Title  (~180 tokens)``.

    With ``rankers`` (hybrid search), ``[fts+vector]`` before the token estimate says which
    rankers found the hit.
    """
    ident = f"{_PREFIX[ref.kind]}{ref.id}"
    found = f"  [{'+'.join(rankers)}]" if rankers else ""
    return (
        f"{marker}{ident}  {when(ref.created_at_epoch)}  {ref.type}  {one_line(ref.title)}"
        f"{found}{stale_note(ref.stale_files if ref.stale else None)}  (~{ref.tokens} tokens)"
    )


STALE_FILES_SHOWN = 3


def stale_note(files: list[str] | None) -> str:
    """``  [stale: a.py, b.py changed since]`` for a stale record; empty otherwise."""
    if not files:
        return ""
    shown = ", ".join(one_line(f)[:120] for f in files[:STALE_FILES_SHOWN])
    more = f" +{len(files) - STALE_FILES_SHOWN}" if len(files) > STALE_FILES_SHOWN else ""
    return f"  [stale: {shown}{more} changed since]"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def search_index(result: IndexPage) -> str:
    """The default ``/api/search`` body (text/plain)."""
    what = f'"{one_line(result.query)}"' if result.query else "(filters only)"
    counts = ", ".join(
        [
            _plural(len(result.observations), "observation"),
            _plural(len(result.sessions), "session summary").replace("summarys", "summaries"),
            _plural(len(result.prompts), "prompt"),
        ]
    )
    how = result.mode if result.order_by == "relevance" else f"{result.mode}, {result.order_by}"
    if result.degraded:
        how += "; semantic search unavailable, full text only"
    lines = [f"workbench search {what}: {counts} ({how}; times UTC)"]
    note = vectors_note(result.vectors_behind, result.vectors_static, result.vectors_rebuilding)
    if note:
        lines.append(note)
    if result.total == 0:
        lines.append("No matches. Try other or fewer words, fewer filters, or mode=fts.")
        return "\n".join(lines) + "\n"
    for attr, heading in _GROUPS:
        group = getattr(result, attr)
        if group:
            lines.append("")
            lines.append(f"{heading}:")
            # Trigger: hybrid search. Why: only there do two rankers compete, so which one
            # found a hit says how to read it. Outcome: [fts], [vector] or [fts+vector].
            hybrid = result.mode == "hybrid"
            lines.extend(ref_line(hit, rankers=hit.rankers if hybrid else None) for hit in group)
    lines.append("")
    lines.append(NEXT_STEPS)
    return "\n".join(lines) + "\n"


def timeline_text(timeline: Timeline) -> str:
    """A timeline as text: one line per record in time order, the anchor marked ``>``."""
    anchor = timeline.anchor
    if anchor.kind == "time":
        label = f"time {anchor.created_at}"
    else:
        label = f"{_PREFIX[anchor.kind]}{anchor.id} {one_line(anchor.title or '')}".rstrip()
    if anchor.query:
        label += f' (best match for "{one_line(anchor.query)}")'
    scope = f", project {anchor.project}" if anchor.project else ""
    lines = [f"workbench timeline around {label}{scope}: {len(timeline.items)} records (UTC)"]
    lines.extend(ref_line(item, marker="> " if item.is_anchor else "  ") for item in timeline.items)
    lines.append("")
    lines.append(
        'Full observations: POST /api/observations/batch {"ids": [..]} with the ids you need.'
    )
    return "\n".join(lines) + "\n"
