"""Pseudo-relevance feedback for full text (RM3-style): the top hits' words as a second query.

Why: a question and its answer often share only one or two words ("what painters did you
recommend?" → "Leonardo da Vinci, Michelangelo and Raphael"), while the turns around the best
matches repeat the topic's other words. RM3 takes the words that weigh most in the first
full-text hits (their share of each hit's words, times the hit's normalised score, times the
word's IDF), runs them as a second BM25 query, and interpolates the two lists:
``score = bm25(query) / top + weight · bm25(expansion) / top_expansion`` (back on the first
list's scale). The expansion words are never the query's own (nor its stopwords, digits or
words of fewer than three letters), so a hit matching only the expansion still ranks below a
hit matching the query unless the expansion is strong.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from collections.abc import Sequence

from workbench.recall import fts
from workbench.recall.filters import SearchFilters

FEEDBACK_DOCS = 5  # first hits read for expansion words
FEEDBACK_TERMS = 8  # expansion words kept
_CANDIDATES = 30  # words by weight whose IDF is looked up
_STEM = 5  # two words sharing their first letters are one word, for "not the query's own"


def _stem(word: str) -> str:
    return word[:_STEM]


def expansion_terms(
    conn: sqlite3.Connection,
    query: str,
    hits: Sequence[tuple[int, float]],
    *,
    docs: int = FEEDBACK_DOCS,
    terms: int = FEEDBACK_TERMS,
) -> list[str]:
    """The ``terms`` words that weigh most in the first ``docs`` full-text ``hits``."""
    top = hits[:docs]
    if not top or top[0][1] <= 0:
        return []
    own = {_stem(w.lower()) for w in fts.WORD.findall(query)}
    best = top[0][1]
    score = {int(i): s / best for i, s in top}
    marks = ", ".join("?" * len(score))
    sql = (
        "SELECT id, title, subtitle, narrative, facts, concepts FROM observations"
        f" WHERE id IN ({marks})"
    )
    weight: dict[str, float] = {}
    for row in conn.execute(sql, list(score)):
        text = " ".join(str(v) for v in tuple(row)[1:] if v)
        words = [
            w
            for w in (x.lower() for x in fts.WORD.findall(text))
            if len(w) > 2 and not w.isdigit() and w not in fts.STOPWORDS and _stem(w) not in own
        ]
        if not words:
            continue
        for word, n in Counter(words).items():
            weight[word] = weight.get(word, 0.0) + score[int(row[0])] * n / len(words)
    if not weight:
        return []
    rows, cap = fts.df_cap(conn, "observations")
    ranked: list[tuple[float, str]] = []
    heaviest = sorted(weight.items(), key=lambda pair: (-pair[1], pair[0]))[:_CANDIDATES]
    for word, w in heaviest:
        df = fts.doc_frequency(conn, "observations", fts.quote(word), cap)
        if df <= 0:
            continue
        ranked.append((w * max(math.log((rows - df + 0.5) / (df + 0.5)), 1e-6), word))
    ranked.sort(key=lambda pair: (-pair[0], pair[1]))
    return [word for _, word in ranked[:terms]]


def interpolate(
    first: Sequence[tuple[int, float]], second: Sequence[tuple[int, float]], weight: float
) -> list[tuple[int, float]]:
    """``first`` and ``second`` max-normalised and summed (``weight`` on ``second``), best first,
    on ``first``'s scale; ties keep ``first``'s order, then ``second``'s."""
    if weight <= 0 or not second or not first:
        return list(first)
    top, top2 = first[0][1], max(s for _, s in second)
    if top <= 0 or top2 <= 0:
        return list(first)
    scores: dict[int, float] = {i: s / top for i, s in first}
    order = {i: n for n, (i, _) in enumerate(first)}
    for i, s in second:
        scores[i] = scores.get(i, 0.0) + weight * s / top2
        order.setdefault(i, len(order))
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
    return [(i, s * top) for i, s in ranked]


def rank(
    conn: sqlite3.Connection,
    query: str,
    first: Sequence[tuple[int, float]],
    filters: SearchFilters | None,
    weight: float,
    limit: int,
) -> list[tuple[int, float]]:
    """The full-text list ``first`` (of ``query``) with RM3 feedback at ``weight`` (0: off)."""
    if weight <= 0:
        return list(first)
    words = expansion_terms(conn, query, first)
    if not words:
        return list(first)
    # Joined by a stopword, so the expansion is OR-ed words only: no phrase of unrelated words.
    second = fts.rank(conn, "observations", " a ".join(words), filters, limit=limit)
    return interpolate(first, second, weight)[:limit]
