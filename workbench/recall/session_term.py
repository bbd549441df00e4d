"""The session term: each hit gains a share of its session's aggregate score (i21-context).

Why: a multi-hop question's evidence is spread over several turns of one conversation, each
matching a part of it ("what did Caroline research after the support group?": one turn names
the group, another the research). Alone, each such turn ranks below a single turn elsewhere
that repeats more of the words; together they say which session holds the answer. So after
fusion, the neighbours' share and the date lift, each session gets an aggregate: the sum of
its ``top`` best scores (max-normalised). Each of its hits gains ``weight`` × that aggregate ÷
the best session's, on the fused scale: the hits of the session that matches the question
best, taken together, rise.

Properties worth knowing:
- when every hit shares one session, each gains the same amount and the order is unchanged;
- a hit with no session, and the hits fusion kept with no score (gated full-text ones), gain
  nothing: the term reorders what a ranker vouched for, it adds no candidate;
- only conversation turns take part (``turn_gate``: memories that are their text alone): the
  term was chosen on conversations, and a coding session's tool notes keep their order;
- ties keep the fused order.

Sessions are ``(session, project)`` pairs, as ``fusion.neighbours`` reads them.

Off by default (``search_session_weight`` 0). Cross-validated across the six relevance sets
(``bench/relevance_context.py``, the fusion at its defaults), 0.25 with the top 3 was chosen
in 9 of 11 folds; held out it lifts friends (R@10 0.579 → 0.613) and memorybank (0.969 →
0.980 leaving it out), leaves coding and the one-meeting-per-search sets unchanged (one
session), and takes the conversations set's R@10 below vector alone (0.934 → 0.925 5-fold):
its multi-hop questions have evidence in two sessions, and the term fills the page with one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.recall import turn_gate
from workbench.recall.session_keys import session_keys
from workbench.recall.turn_gate import ContextGate

DEFAULT_SESSION_WEIGHT = 0.0
DEFAULT_SESSION_TOP = 2
DEFAULT_CONTEXT_GATE: ContextGate = "turns"


@dataclass(frozen=True)
class ConversationParams:
    """The context gate and the session term, from the settings (their defaults without)."""

    context_gate: ContextGate = DEFAULT_CONTEXT_GATE
    session_weight: float = DEFAULT_SESSION_WEIGHT
    session_top: int = DEFAULT_SESSION_TOP

    @classmethod
    def from_settings(cls, settings: Any) -> ConversationParams:
        base = cls()
        gate = getattr(settings, "search_context_gate", base.context_gate)
        return cls(
            context_gate="any" if gate == "any" else "turns",
            session_weight=float(getattr(settings, "search_session_weight", base.session_weight)),
            session_top=int(getattr(settings, "search_session_top", base.session_top)),
        )


def sessions_of(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """``id -> (session, project)`` for the conversation turns among ``ids`` that have a session.

    Turns only (``turn_gate``): the term was measured on conversations; a coding session's
    tool notes keep their fused order.
    """
    return session_keys(conn, ids, f"content_session_id IS NOT NULL AND {turn_gate.TURN_SQL}")


def lifted(
    fused: Sequence[tuple[int, float]],
    session_of: Mapping[int, object],
    weight: float,
    top: int = DEFAULT_SESSION_TOP,
    *,
    best_only: bool = False,
) -> list[tuple[int, float]]:
    """``fused`` with each scored hit gaining ``weight`` × its session's share (see above).

    ``best_only``: only the ``top`` hits that make a session's aggregate gain it, so one
    session cannot fill the page with its weaker turns (evidence in another session keeps its
    place behind at most ``top`` lifted hits of each session above it).
    """
    if weight <= 0 or top <= 0 or not fused:
        return list(fused)
    peak = max(s for _, s in fused)
    if peak <= 0:
        return list(fused)
    # Each scored hit's share of the peak; one too small to be told from 0 (5e-324 / 2.0
    # underflows) has none and is left as it is, else an aggregate of 0 would divide below.
    share = {
        item: part
        for item, score in fused
        if score > 0 and item in session_of and (part := score / peak) > 0
    }
    members: dict[object, list[float]] = {}
    for item, part in share.items():
        members.setdefault(session_of[item], []).append(part)
    if not members:
        return list(fused)
    aggregate = {key: sum(sorted(v, reverse=True)[:top]) for key, v in members.items()}
    best = max(aggregate.values())
    order = {item: n for n, (item, _) in enumerate(fused)}
    taken: dict[object, int] = {}
    scores = []
    for item, score in fused:  # best first: a session's first ``top`` are its best
        if item in share:
            key = session_of[item]
            taken[key] = taken.get(key, 0) + 1
            if not best_only or taken[key] <= top:
                score += weight * peak * aggregate[key] / best
        scores.append((item, score))
    return sorted(scores, key=lambda pair: (-pair[1], order[pair[0]]))
