"""Which hits may read their previous turn: the gate on the session's shape (i21-context).

``search_context_weight`` (``fusion.carried``) lets a full-text hit pass a share of its BM25
score to the memory saved just after it in its session. In a conversation that is the reply
to the turn that holds the question's words ("where is the ring?" → "in the fridge"); in a
coding session the next memory is an unrelated tool note, and lifting it cost the coding set
R@10 (0.861 → 0.833, below vector alone: ``bench/relevance_context.py``).

What tells the two apart is the memory's shape, not its words: an observation derived from
tool calls carries a narrative, facts or files; a conversation turn (a chat line saved as a
memory, an imported transcript's utterance) is its text alone. So a hit passes its score on
only when both it and the next memory are *turns*: no narrative, no facts, no files read or
modified. ``search_context_gate = "any"`` passes every adjacent pair (the ungated lever).

The gate is the default; the lever itself (``search_context_weight``) stays off: with the
fusion at its defaults, cross-validation across the six relevance sets chose it in 1 of 11
folds (``bench/relevance_context.py``, which prints the per-set and per-class figures).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Literal

ContextGate = Literal["turns", "any"]

# A memory that is only its words: what a conversation turn is when saved as a memory.
TURN_SQL = "narrative = '' AND facts = '[]' AND files_read = '[]' AND files_modified = '[]'"


def turns_among(conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
    """The memories among ``ids`` that are conversation turns (their text alone)."""
    unique = sorted(set(ids))
    found: set[int] = set()
    for start in range(0, len(unique), 500):  # SQLite caps host parameters
        chunk = unique[start : start + 500]
        sql = (
            f"SELECT id FROM observations WHERE id IN ({', '.join('?' * len(chunk))})"
            f" AND {TURN_SQL}"
        )
        found.update(int(row[0]) for row in conn.execute(sql, chunk))
    return found


def gated(beside: Mapping[int, Sequence[int]], turns: set[int]) -> dict[int, tuple[int, ...]]:
    """``beside`` (``fusion.neighbours``) keeping only a turn's neighbours that are turns.

    Why: ``fusion.carried`` and ``fusion.previous_turns`` read a hit with its neighbour; a
    tool note's neighbour is other work, so between anything but two turns there is no pair.
    """
    return {
        i: tuple(j for j in near if j in turns) if i in turns else () for i, near in beside.items()
    }
