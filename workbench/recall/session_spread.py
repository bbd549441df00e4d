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
