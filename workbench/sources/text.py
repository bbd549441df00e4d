"""A merged reply as text: the compact index and timeline with authors.

A colleague's hit is its ``team:author:id`` ref and ends with ``@author``; a ``#id`` is yours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.recall.compact import one_line, when
from workbench.recall.hits import RecordRef, SearchHit
from workbench.sources.replies import ME

if TYPE_CHECKING:
    from workbench.sources.replies import (
        MergedSearchReply,
        MergedTimeline,
    )

_PREFIX = {"observation": "#", "summary": "#S", "prompt": "#P"}
_GROUPS = (
    ("observations", "Observations"),
    ("sessions", "Session summaries"),
    ("prompts", "Prompts"),
)


def index_line(item: RecordRef, marker: str = "") -> str:
    """One record of the index: ``#id`` for yours, the ref and ``@author`` for a colleague's."""
    ref = getattr(item, "ref", None)
    author = getattr(item, "author", ME)
    label = ref or f"{_PREFIX.get(item.kind, '#')}{item.id}"
    whose = "" if author == ME else f"  @{author}"
    return (
        f"{marker}{label}  {when(item.created_at_epoch)}  {item.type}  "
        f"{one_line(item.title)}{whose}  (~{item.tokens} tokens)"
    )


def search_text(reply: MergedSearchReply) -> str:
    """A merged search as the compact text index."""
    what = f'"{reply.query}"' if reply.query else "(filters only)"
    lines = [
        f"workbench search {what} with the team (snapshot {reply.team_snapshot}): "
        f"{len(reply.observations)} observations, {reply.team_results} from colleagues "
        "(@author; times UTC)"
    ]
    if reply.team_stale:
        lines.append(reply.team_stale)
    for name, heading in _GROUPS:
        group: list[SearchHit] = getattr(reply, name)
        if group:
            lines += ["", f"{heading}:"] + [index_line(h) for h in group]
    if not reply.total:
        lines.append("No matches. Try other or fewer words, or fewer filters.")
    lines += [
        "",
        "A colleague's observation is cited by its ref (team:author:id): get_observations, "
        "`workbench show` and /api/team/observation/{ref} take it; a #id is yours.",
    ]
    return "\n".join(lines) + "\n"


def timeline_text(timeline: MergedTimeline) -> str:
    """A merged timeline as text, the anchor marked ``>``, colleagues' items ``@author``."""
    anchor = timeline.anchor
    label = anchor.title or anchor.created_at
    lines = [
        f"workbench timeline around {label} with the team (snapshot {timeline.team_snapshot}): "
        f"{len(timeline.items)} records (UTC)"
    ]
    lines += [index_line(i, "> " if i.is_anchor else "  ") for i in timeline.items]
    return "\n".join(lines) + "\n"
