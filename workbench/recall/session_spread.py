"""The session spread: a session's later hits give way to other sessions' (i21-context).

Why: a multi-hop question's evidence can sit in two conversations ("what did Caroline do
after the parade, and where did she move later?": one session holds the parade, another the
move). Fused scores rank by likeness to the question, and one session that repeats its words
fills the page with its turns, pushing the other session's evidence off it (the session term,
``session_term``, made that worse: conversations set session R@10 0.972 → 0.943). So after
fusion (and the session term, if on) the hits are re-read in fused order, MMR-like: a turn
whose session already has ``free`` hits above it keeps only ``(1 − weight)^k`` of its score,
``k`` being how many of its session's hits came before it beyond the first ``free``.

Properties worth knowing:
- it reorders, never adds or drops a hit; a hit's score only falls;
- only conversation turns take part (``turn_gate``, via ``session_term.sessions_of``): a
  coding session's tool notes keep their order;
- a hit with no score (a gated full-text one kept at 0) or no session is unchanged;
- with ``weight`` 0 (the default: off) the fused order is returned as it is; ties keep the
  fused order.

Off by default, and the figures say it stays off: cross-validated across the six relevance
sets (``bench/relevance_context.py``, weights 0.25 / 0.5 / 0.75, free 1 / 2, the fusion at its
defaults or re-chosen, with or without the session term) it was chosen in 0 of 11 folds alone
and 1 of 11 after the session term. Held at the fusion's defaults (R@10, session R@10): it
does what it says on FriendsQA (session R@10 0.930 -> 0.980 at 0.25 / free 1) but each turn
it moves onto the page costs a turn of the leading session that was gold (R@10 0.579 ->
0.511); MemoryBank's evidence sits in one session (R@10 0.969 -> 0.883, 0.923 at free 2);
the conversations set's session R@10 is 0.972 already, its one multi-hop miss is not a
crowded page, and R@10 falls (0.934 -> 0.915 at free 1, equal at free 2). Coding and the
one-meeting sets do not move (tool notes; one session per search).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_SPREAD_WEIGHT = 0.0
DEFAULT_SPREAD_FREE = 1


@dataclass(frozen=True)
class SpreadParams:
    """``search_spread_weight`` and ``search_spread_free`` (their defaults without settings)."""

    weight: float = DEFAULT_SPREAD_WEIGHT
    free: int = DEFAULT_SPREAD_FREE

    @classmethod
    def from_settings(cls, settings: Any) -> SpreadParams:
        return cls(
            weight=float(getattr(settings, "search_spread_weight", DEFAULT_SPREAD_WEIGHT)),
            free=int(getattr(settings, "search_spread_free", DEFAULT_SPREAD_FREE)),
        )


def spread(
    fused: Sequence[tuple[int, float]],
    session_of: Mapping[int, object],
    weight: float,
    free: int = DEFAULT_SPREAD_FREE,
) -> list[tuple[int, float]]:
    """``fused`` (best first) with each session's hits past its first ``free`` demoted (above)."""
    if weight <= 0 or not fused:
        return list(fused)
    keep = max(0.0, 1.0 - weight)
    seen: dict[object, int] = {}
    order = {item: n for n, (item, _) in enumerate(fused)}
    scores = []
    for item, score in fused:
        if score > 0 and item in session_of:
            key = session_of[item]
            before = seen.get(key, 0)
            seen[key] = before + 1
            if before >= free:
                score *= keep ** (before - free + 1)
        scores.append((item, score))
    return sorted(scores, key=lambda pair: (-pair[1], order[pair[0]]))
