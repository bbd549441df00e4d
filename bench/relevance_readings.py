"""Both readings of a question's recall: the share of its evidence, and whether any of it came.

Issue 21's "where it stands" figures (R@10 0.742, R@5 0.654, session R@10 0.933 on the
held-out benchmark) turned out to be the *any-of-the-evidence* reading: a question counts 1
when at least one of its evidence turns is in the top k, 0 otherwise (the lead's finding:
current code reaches hit@10 0.740 / share R@10 well below it there). The project's benches
printed only the share (``bench.relevance.metrics``: the fraction of a question's evidence in
the top k), so a multi-hop question with two evidence turns, one found, counted 0.5 here and 1
there. Both are printed now, so the sets are judged in the issue's reading too:

- ``r5`` / ``r10``: the share of the question's evidence among the top 5 / 10 (as before);
- ``mrr``: 1 / the place of the first evidence hit (the same in both readings);
- ``hit5`` / ``hit10``: 1 when any evidence is among the top 5 / 10;
- ``sess_r10``: the share of the evidence's sessions among the top 10 hits' sessions;
- ``sess_hit10``: 1 when any evidence session is among them.

A question whose evidence has no known session (a set without sessions) reads ``None`` for
the two session readings; ``mean`` skips those.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["NAMES", "Readings", "mean", "read"]

NAMES = ("r5", "r10", "mrr", "hit5", "hit10", "sess_r10", "sess_hit10")


@dataclass(frozen=True)
class Readings:
    """One question's readings of one ranked list (see the module's docstring)."""

    r5: float
    r10: float
    mrr: float
    hit5: float
    hit10: float
    sess_r10: float | None
    sess_hit10: float | None


def read(
    ranked: Sequence[int],
    relevant: Iterable[int],
    session_of: Mapping[int, object] | None = None,
) -> Readings:
    """The readings of ``ranked`` (best first) against the evidence ids ``relevant``.

    ``session_of``: id -> session for the evidence and the ranked ids (None, or no session
    known for any evidence id: the session readings are None). Raises ValueError on a
    question without evidence (a set's bug: it could never be found).
    """
    gold = set(relevant)
    if not gold:
        raise ValueError("a question without evidence ids: fix the set that produced it")
    top5, top10 = set(ranked[:5]), set(ranked[:10])
    first = next((n for n, i in enumerate(ranked, start=1) if i in gold), None)
    sess_r10: float | None = None
    sess_hit10: float | None = None
    if session_of is not None:
        gold_sessions = {session_of[i] for i in gold if i in session_of}
        if gold_sessions:
            got = {session_of[i] for i in ranked[:10] if i in session_of}
            found = len(gold_sessions & got)
            sess_r10 = found / len(gold_sessions)
            sess_hit10 = 1.0 if found else 0.0
    return Readings(
        r5=len(gold & top5) / len(gold),
        r10=len(gold & top10) / len(gold),
        mrr=1 / first if first else 0.0,
        hit5=1.0 if gold & top5 else 0.0,
        hit10=1.0 if gold & top10 else 0.0,
        sess_r10=sess_r10,
        sess_hit10=sess_hit10,
    )


def mean(readings: Sequence[Readings]) -> dict[str, float | None]:
    """Each reading's mean over ``readings`` (a session reading over the questions that have
    one; None when none has, or there are no readings)."""
    out: dict[str, float | None] = {}
    for name in NAMES:
        values = [v for r in readings if (v := getattr(r, name)) is not None]
        out[name] = statistics.fmean(values) if values else None
    return out
