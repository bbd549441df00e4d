"""Fusing the full-text and vector rankings: weighted, score-aware, with a BM25 confidence gate,
then a share of each hit's score to its neighbouring turns.

Why not reciprocal-rank fusion (RRF, still here as ``method="rrf"`` to compare): RRF sees ranks
only, so the 1st of a weak list counts as much as the 1st of a strong one. BM25 over an OR of
the query's words always has a 1st, even when it matched one common word of five; on the
coding set that outvoted strong semantic hits and hybrid fell to R@10 0.61 while vectors alone
reached 0.86 (issue 10).

Weighted fusion scores each candidate ``d``:

    fused(d) = w_fts · t(d) + w_vec · v(d)

- ``v(d)``: the cosine similarity (clipped at 0), an absolute measure: a weak semantic match
  stays weak whatever its rank;
- ``t(d) = bm25(d) / max bm25 · coverage(d)``, where ``coverage(d)`` is the share of the
  query's information (the IDF of its pieces: BM25's own weights) that ``d`` matches. An
  OR-match on one common word has a coverage near 0; a document with every rare word of the
  query has 1;
- the gate: when ``coverage(d) < gate`` a full-text hit contributes nothing; such hits are
  kept, after every scored one, in BM25 order (fusion never drops what a ranker found);
- a full-text hit beyond the vector list gets its real cosine (the engine asks the ranker for
  just those ids), and one the index does not hold yet (saved since the last embedding) gets
  its full-text part with both weights, so a new memory is found by its words at once.

Ties break on the best rank either ranker gave, then on id, so equal scores keep one order.

Dates (``dated``, i21-first): a query naming a day ("on May 4th", ``query_dates``) lifts
the hits saved on that day by ``date_weight`` × the top fused score. The CV over six sets
(the four below, MemoryBank's chats, whose questions often name a day, and FriendsQA) chose
1.0 in ten of eleven folds (the eleventh held MemoryBank out, so no training question named a
day): MemoryBank held out 5-fold, R@5 0.821 → 0.898, R@10 0.878 → 0.959, MRR 0.531 → 0.590;
no other set's questions name a day. At 1.0 the named day's hits lead in their fused order
and the rest follow: a soft filter that never drops a hit.

Conversation structure (``smooth``): after fusion, each hit gains ``neighbour_weight`` × the
score of its best neighbouring turn (the memory saved just before or after it in the same
session), and a neighbour no ranker found joins the list with that share: the answer often sits
in the turn beside the one that repeats the question's words.

Context (``carried``, i21-context; ``search_context_weight``, off by default): before fusion,
each full-text hit passes a share of its BM25 score to the turn saved just after it in its
session, and that turn's coverage counts what the two turns hold together: a turn read with
the one before it, as a second, lower-weight full-text column would read it, without a second
index. Cross-validated with the fusion re-chosen around it (``bench/relevance_context.py``):
chosen in every fold, yet held out it won on ``committee`` (class-balanced 0.523 → 0.553),
split ``meetings`` and ``friends`` and lost a little on the three others (``coding``'s R@10
below vector alone), so it stays off; the figures are in that bench's docstring.

Calibration (i21-fusion, stop 29: "hybrid must never fall below its best single part"). With
the defaults before it, hybrid fell below vector alone on the project's coding set (held out:
R@10 0.847 against 0.861, MRR 0.666 against 0.676) and conversations (R@5 0.896 against
0.925). Two causes, two fixes, both parameters:

- ``coverage_power``: the full-text part is ``bm25 / max · coverage ** power``. Linear (1), a
  hit matching a third of the query kept a third of a full match's weight: six OR-matches at
  30% lifted a weaker vector hit over the vector's clear first. Squared (2), it keeps a ninth,
  and a hit holding every word of the question keeps all of it (1 ** 2), so the meeting sets,
  where full text is the stronger part, keep their wins;
- ``neighbour_lift``: ``smooth``'s ``toward`` lifts a turn only toward a stronger neighbour;
  ``add`` (before) let two adjacent strong turns lift each other over a stronger lone first.

How the defaults were chosen (``bench/relevance_cv.py`` prints all of it). Six sets: the
project's ``coding`` and ``conversations`` and MemoryBank's chats (MiniLM the stronger part),
QMSum's ``meetings`` and ``committee`` and FriendsQA's ``friends`` (full text the stronger).
One grid over weighted fusion (w_fts 0.3–0.6, gate 0.2–0.4, coverage power 1/2/3) and RRF (k
10/60, gate 0/0.2), each with neighbours off or 0.1/0.2/0.3 with either lift, and date weight
0/1; the objective is the class-balanced mean of R@5, R@10 and MRR, after the fewest (set,
class, metric) losses to the better single ranker. By axis over the 11 folds: power 2 and
``toward`` in 10, neighbours 0.3 in 10, w_fts 0.5 in 8, gate 0.2 in 7 and 0.3 in 4; the most
frequent point (5 of 11, and the same rule on every set at once) has gate 0.2. The default
takes gate 0.3: at 0.2, ``tests/test_recall_fusion_minilm.py`` (the conversations set with
small talk, real MiniLM through the engine) had paraphrase MRR 0.699 against vector's 0.701;
at 0.3 it reaches every part there. Defaults: w_fts 0.5 / w_vec 0.5 / gate 0.3 / power 2 /
neighbours 0.3 ``toward`` / date 1. Per set (R@5 / R@10 / MRR; before = main's
0.4 / 0.6 / 0.3, linear, neighbours 0.1 ``add``):

    set            fts             vector          before          defaults        held out
    coding         .319/.319/.319  .722/.861/.675  .736/.861/.677  .722/.861/.675  .722/.861/.673
    conversations  .604/.604/.609  .924/.934/.807  .896/.934/.849  .924/.934/.852  .915/.934/.853
    meetings       .091/.141/.538  .091/.133/.506  .108/.158/.603  .108/.157/.573  .103/.159/.589
    committee      .307/.418/.749  .253/.360/.617  .353/.455/.764  .380/.491/.773  .374/.493/.757
    memorybank     .691/.758/.467  .791/.867/.479  .898/.969/.590  .883/.972/.588  .893/.972/.600
    friends        .455/.503/.430  .376/.469/.314  .503/.579/.460  .507/.603/.465  .507/.610/.469

"before" and "defaults" are in-sample (fixed points; before was chosen on these sets last
stop, where held out it gave coding .722/.847/.666); "held out" is the CV procedure's 5-fold
by question. Class-balanced over every set: before 0.6778, defaults 0.6831 (gate 0.2: 0.6843).
Left: conversations R@5 held out is 0.009 under vector (one question's evidence; in-sample
the defaults reach it), coding MRR up to 0.002 under it. RRF never won a fold (textbook k=60:
coding 0.634, conversations 0.785 class-balanced).
Min-max-normalised cosine lost to the plain cosine in issue 10.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from workbench.recall import fts
from workbench.recall.filters import Kind
from workbench.recall.query_dates import Day
from workbench.recall.session_keys import session_keys
from workbench.store.identifiers import split_identifiers

Method = Literal["weighted", "rrf"]
Lift = Literal["toward", "add"]
RRF_K = 60
# Chosen by bench/relevance_cv.py (the settings' defaults repeat them).
DEFAULT_FTS_WEIGHT = 0.5
DEFAULT_VECTOR_WEIGHT = 0.5
DEFAULT_FTS_GATE = 0.3
DEFAULT_NEIGHBOUR_WEIGHT = 0.3
DEFAULT_DATE_WEIGHT = 1.0
DEFAULT_FEEDBACK_WEIGHT = 0.0
DEFAULT_CONTEXT_WEIGHT = 0.0  # i21-context: won 1 of 6 sets held out (see ``carried``)
# i21-fusion (this stop): the full-text side calibrated by coverage ** power, and a turn
# lifted only toward a stronger neighbour (``smooth``); chosen by bench/relevance_cv.py.
DEFAULT_COVERAGE_POWER = 2.0
DEFAULT_NEIGHBOUR_LIFT: Lift = "toward"


@dataclass(frozen=True)
class FusionParams:
    """How to fuse: the method, the per-ranker weights, and the BM25 coverage gate."""

    method: Method = "weighted"
    fts_weight: float = DEFAULT_FTS_WEIGHT
    vector_weight: float = DEFAULT_VECTOR_WEIGHT
    fts_gate: float = DEFAULT_FTS_GATE
    vector_norm: Literal["cosine", "minmax"] = "cosine"
    rrf_k: int = RRF_K
    rrf_fts_share: float = 0.5  # RRF: the full-text list's share of the vote (0.5: textbook)
    rrf_gate: float = 0.0  # RRF: a full-text hit matching less of the query gets no vote
    neighbour_weight: float = DEFAULT_NEIGHBOUR_WEIGHT  # share of its best neighbour's score
    date_weight: float = DEFAULT_DATE_WEIGHT  # share of the top score a hit on a named day gains
    feedback_weight: float = DEFAULT_FEEDBACK_WEIGHT  # RM3 expansion's share (feedback.py)
    context_weight: float = DEFAULT_CONTEXT_WEIGHT  # share of the previous turn's BM25 (carried)
    coverage_power: float = DEFAULT_COVERAGE_POWER  # t(d) = bm25 / max · coverage ** this
    neighbour_lift: Lift = DEFAULT_NEIGHBOUR_LIFT  # how a turn gains from its neighbours (smooth)

    @classmethod
    def from_settings(cls, settings: Any) -> FusionParams:
        """The settings' fusion fields (the defaults when ``settings`` is None or lacks them)."""
        base = cls()
        return cls(
            method=getattr(settings, "search_fusion", base.method),
            fts_weight=float(getattr(settings, "search_fts_weight", base.fts_weight)),
            vector_weight=float(getattr(settings, "search_vector_weight", base.vector_weight)),
            fts_gate=float(getattr(settings, "search_fts_gate", base.fts_gate)),
            rrf_k=int(getattr(settings, "search_rrf_k", base.rrf_k)),
            rrf_fts_share=float(getattr(settings, "search_rrf_fts_share", base.rrf_fts_share)),
            rrf_gate=float(getattr(settings, "search_rrf_gate", base.rrf_gate)),
            neighbour_weight=float(
                getattr(settings, "search_neighbour_weight", base.neighbour_weight)
            ),
            date_weight=float(getattr(settings, "search_date_weight", base.date_weight)),
            feedback_weight=float(
                getattr(settings, "search_feedback_weight", base.feedback_weight)
            ),
            context_weight=float(getattr(settings, "search_context_weight", base.context_weight)),
            coverage_power=float(getattr(settings, "search_coverage_power", base.coverage_power)),
            neighbour_lift=getattr(settings, "search_neighbour_lift", base.neighbour_lift),
        )


def rrf(lists: Iterable[tuple[str, Sequence[int]]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: score(id) = Σ 1 / (k + rank) over the lists it appears in."""
    scores: dict[int, float] = {}
    for _, ids in lists:
        for position, item in enumerate(ids, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + position)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def rrf_gated(
    text: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    coverage: Mapping[int, float],
    params: FusionParams,
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion with ``params.rrf_k``, a share of the vote per list, and a gate.

    score(d) = 2·s / (k + rank_fts(d)) + 2·(1 − s) / (k + rank_vec(d)), with s =
    ``rrf_fts_share`` (0.5: the textbook sum). A full-text hit matching less than ``rrf_gate``
    of the query (its IDF share, ``coverage``) gets no full-text vote; one no list vouches
    for comes last, in BM25 order (fusion never drops what a ranker found). Ties break on id.
    """
    k, share = params.rrf_k, params.rrf_fts_share
    scores: dict[int, float] = {}
    gated: list[int] = []
    for position, (item, _) in enumerate(text, start=1):
        if coverage.get(item, 1.0) < params.rrf_gate:
            gated.append(item)
            continue
        scores[item] = 2 * share / (k + position)
    for position, (item, _) in enumerate(vector, start=1):
        scores[item] = scores.get(item, 0.0) + 2 * (1 - share) / (k + position)
    scored = sorted(
        ((i, s) for i, s in scores.items() if s > 0), key=lambda pair: (-pair[1], pair[0])
    )
    held = {i for i, _ in scored}
    rest = [i for i in dict.fromkeys([*gated, *scores]) if i not in held]
    return scored + [(i, 0.0) for i in rest]


def weighted(
    text: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    coverage: Mapping[int, float],
    params: FusionParams,
    *,
    cosines: Mapping[int, float] | None = None,
    unembedded: Collection[int] = (),
) -> list[tuple[int, float]]:
    """Fuse BM25 ``(id, score)`` and vector ``(id, cosine)`` lists (each best first).

    ``coverage`` maps a full-text hit to the share of the query it matches (missing: 1.0).
    ``cosines``: the similarity of full-text hits beyond the vector list (asked of the ranker
    for just those ids), so both halves of their score are real. ``unembedded``: full-text
    hits the vector index does not hold yet (new since the last embedding); with no vector to
    weigh, their full-text part counts with both weights, so a memory saved a second ago
    still ranks by its words. Returns ``(id, fused score)`` best first; gated full-text-only
    hits come last with 0.0.
    """
    top = max((s for _, s in text), default=0.0)
    best_rank: dict[int, int] = {}
    scores: dict[int, float] = {}
    gated_bm25: dict[int, float] = {}
    alone = params.fts_weight + params.vector_weight
    for position, (item, score) in enumerate(text, start=1):
        best_rank[item] = position
        cover = coverage.get(item, 1.0)
        if cover < params.fts_gate or top <= 0:
            gated_bm25[item] = score
            scores[item] = 0.0
            continue
        weight = alone if item in unembedded else params.fts_weight
        scores[item] = weight * (score / top) * cover**params.coverage_power
    for item, cosine in (cosines or {}).items():
        if item in scores and item not in unembedded:
            scores[item] += params.vector_weight * max(cosine, 0.0)
    low = min((c for _, c in vector), default=0.0)
    high = max((c for _, c in vector), default=0.0)
    for position, (item, cosine) in enumerate(vector, start=1):
        best_rank[item] = min(best_rank.get(item, position), position)
        if params.vector_norm == "minmax":
            value = (cosine - low) / (high - low) if high > low else 1.0
        else:
            value = max(cosine, 0.0)
        scores[item] = scores.get(item, 0.0) + params.vector_weight * value
    scored = [(i, s) for i, s in scores.items() if s > 0]
    scored.sort(key=lambda pair: (-pair[1], best_rank[pair[0]], pair[0]))
    rest = [i for i, s in scores.items() if s <= 0]
    # Trigger: a hit no ranker vouches for (gated BM25 only, or a cosine ≤ 0).
    # Why: fusion must not lose what a part found. Outcome: last, in BM25 then rank order.
    rest.sort(key=lambda i: (-gated_bm25.get(i, 0.0), best_rank[i], i))
    return scored + [(i, 0.0) for i in rest]


def fuse(
    text: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    coverage: Mapping[int, float],
    params: FusionParams,
    *,
    cosines: Mapping[int, float] | None = None,
    unembedded: Collection[int] = (),
) -> list[tuple[int, float]]:
    """Fuse with ``params.method`` (``weighted`` by default, ``rrf`` to compare)."""
    if params.method == "rrf":
        return rrf_gated(text, vector, coverage, params)
    return weighted(text, vector, coverage, params, cosines=cosines, unembedded=unembedded)


# ----- conversation structure: a hit's neighbouring turns ----------------------------------------
def neighbours(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """``id -> the memories saved just before and after it in the same session``.

    One primary-key lookup for ``ids`` and their ±1 ids: turns of one conversation are saved
    in order, so a turn's neighbours are the ids beside it when they share its session (and
    project); an id beside it from another session is no neighbour.
    """
    where = session_keys(conn, [j for i in ids for j in (i - 1, i, i + 1)])
    return {
        i: tuple(j for j in (i - 1, i + 1) if j in where and where[j] == where[i])
        for i in ids
        if i in where
    }


def smooth(
    fused: Sequence[tuple[int, float]],
    beside: Mapping[int, Sequence[int]],
    weight: float,
    allowed: Collection[int] | None = None,
    lift: Lift = DEFAULT_NEIGHBOUR_LIFT,
) -> list[tuple[int, float]]:
    """Each hit is lifted by its neighbouring turns' scores (on the fused scale).

    Why: in a conversation the answer and the words of the question often sit in adjacent
    turns ("what did she recommend?" → "try the Little Prince"); a turn next to a strong hit
    is likelier evidence than a lone weak match. A neighbour no ranker found joins the list
    with ``weight`` × its neighbour's score. ``lift``:

    - ``toward`` (default, i21-fusion): a found hit gains ``weight`` × how far its best
      neighbour is above it, so it moves toward a stronger neighbour and never gains from a
      weaker one. With ``add`` two adjacent strong turns lifted each other over a stronger
      lone first (the project's conversations: hybrid R@5 0.896 against vector's 0.925);
    - ``add`` (stop 27): a found hit gains ``weight`` × its best neighbour's score.

    ``allowed``: the ids a neighbour may be (the search's filters); None allows any. Ties keep
    the fused order. The first hit never gains more than ``weight`` over its own score under
    either lift, which ``search.first_is_settled`` relies on.
    """
    if weight <= 0 or not fused:
        return list(fused)
    top = max(s for _, s in fused)
    if top <= 0:
        return list(fused)
    base = {i: s / top for i, s in fused}
    order = {i: n for n, (i, _) in enumerate(fused)}
    scores = dict(base)
    for item, score in base.items():
        for other in beside.get(item, ()):
            if allowed is not None and other not in allowed:
                continue
            if other not in base:
                order.setdefault(other, len(order))
                scores[other] = max(scores.get(other, 0.0), weight * score)
            elif lift == "toward":
                gain = weight * max(score - base[other], 0.0)
                scores[other] = max(scores[other], base[other] + gain)
            else:
                scores[other] = max(scores[other], base[other] + weight * score)
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
    return [(i, s * top) for i, s in ranked]  # back on the fused scale


def previous_turns(beside: Mapping[int, Sequence[int]]) -> dict[int, int]:
    """``id -> the turn saved just before it in its session``, from ``neighbours``' answer."""
    return {i: i - 1 for i, near in beside.items() if i - 1 in near}


def carried(
    text: Sequence[tuple[int, float]],
    beside: Mapping[int, Sequence[int]],
    weight: float,
    allowed: Collection[int] | None = None,
) -> list[tuple[int, float]]:
    """The full-text list with each hit's turn after it gaining ``weight`` × the hit's BM25.

    Why (i21-context): a turn is read with the turn before it. "What did Joey say when Monica
    asked about the ring?": the words are in Monica's turn, the answer in the next one; with
    its previous turn as a second, lower-weight source, the answer scores ``bm25(turn) + weight
    · bm25(previous turn)``. Computed at query time from the hits' own scores: a context
    column in the index (``bench/relevance_context.py``, source ``index``) scored no better
    under cross-validation and would cost a second index and its upkeep on every edit and
    delete. A turn no hit reached joins the list with its carried score; ``allowed``: the ids
    such a turn may be (the search's filters), None allows any. Best first, ties by id.
    """
    if weight <= 0 or not text:
        return list(text)
    scores = dict(text)
    for item, score in text:
        after = item + 1
        if after not in beside.get(item, ()):
            continue
        if after not in scores and allowed is not None and after not in allowed:
            continue
        scores[after] = scores.get(after, 0.0) + weight * score
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


# ----- dates: the days a query names ------------------------------------------------------------
def created_on(conn: sqlite3.Connection, ids: Sequence[int], days: Sequence[Day]) -> set[int]:
    """The memories among ``ids`` saved (local time) on one of ``days``."""
    if not days or not ids:
        return set()
    on: set[int] = set()
    for start in range(0, len(ids), 500):  # SQLite caps host parameters
        chunk = list(ids[start : start + 500])
        sql = (
            "SELECT id, created_at_epoch FROM observations"
            f" WHERE id IN ({', '.join('?' * len(chunk))})"
        )
        for row in conn.execute(sql, chunk):
            moment = datetime.fromtimestamp(int(row[1]) / 1000)
            if any(day.holds(moment) for day in days):
                on.add(int(row[0]))
    return on


def dated(
    fused: Sequence[tuple[int, float]], on_day: Collection[int], weight: float
) -> list[tuple[int, float]]:
    """Each hit saved on a day the query names gains ``weight`` × the top score.

    Why: "what did I tell you on May 4th?" asks for that day's memories, and no ranker sees a
    memory's date. The lift is a share of the top score: below 1 a much stronger match from
    another day can still lead; at 1 the day's hits lead. Ties keep the fused order.
    """
    if weight <= 0 or not fused or not on_day:
        return list(fused)
    top = max(s for _, s in fused)
    if top <= 0:
        return list(fused)
    order = {i: n for n, (i, _) in enumerate(fused)}
    scores = [(i, s + weight * top if i in on_day else s) for i, s in fused]
    return sorted(scores, key=lambda pair: (-pair[1], order[pair[0]]))


# ----- coverage: how much of the query a full-text hit matches --------------------------------
def idf(rows: int, df: int) -> float:
    """BM25's inverse document frequency (FTS5's formula, floored just above 0)."""
    return max(math.log((rows - df + 0.5) / (df + 0.5)), 1e-6)


def coverage(
    conn: sqlite3.Connection,
    kind: Kind,
    query: str,
    ids: Sequence[int],
    previous: Mapping[int, int] | None = None,
) -> dict[int, float]:
    """``id -> share of the query's IDF`` that each full-text hit in ``ids`` matches.

    ``previous`` (``id -> its previous turn``, with ``carried``): a piece matched by a hit's
    previous turn counts as matched by the hit, so a turn read with its context is gated by
    what the two turns hold together.

    The pieces' document frequencies come from the cached counts the BM25 tiers already
    took. Which pieces each hit matches is asked of a scratch FTS5 table (in memory, same
    columns and tokenizer as the real one) holding only the candidates' text: matching a
    common piece in the real index walks its whole doclist (~16 ms a query at 100k rows),
    while the scratch table of ≤100 rows answers in microseconds. A piece found in no row
    still counts (with the highest IDF): the query asked for something the memory lacks, so
    a hit on its other words is a weak one.
    """
    # The query's words, not its phrases: coverage asks which of the words a hit holds (a
    # phrase piece is a ranking boost, and a hit holding the phrase holds its words anyway).
    every = fts.query_pieces(query)
    pieces = [p for p in every if " " not in p] or every
    unique = list(dict.fromkeys(int(i) for i in ids))
    if not pieces or not unique:
        return {}
    before = {i: previous[i] for i in unique if i in previous} if previous else {}
    rows, cap = fts.df_cap(conn, kind)  # the tiers' cap: their cached counts are reused
    weights = {p: fts.doc_frequency(conn, kind, p, cap) for p in pieces}
    idfs = {p: idf(max(rows, df), df) for p, df in weights.items()}
    total = sum(idfs.values())
    matched: dict[int, float] = dict.fromkeys(unique, 0.0)
    live = [p for p in pieces if weights[p] > 0]
    if not live:
        return matched
    read = list(dict.fromkeys([*unique, *before.values()]))
    with _scratch_of(conn, kind, read) as (scratch, name):
        for piece in live:
            found = {
                int(r[0])
                for r in scratch.execute(f"SELECT rowid FROM {name} WHERE {name} MATCH ?", (piece,))
            }
            for i in unique:
                if i in found or before.get(i) in found:
                    matched[i] += idfs[piece]
    return {i: w / total for i, w in matched.items()}


def matching(conn: sqlite3.Connection, kind: Kind, expression: str, ids: Sequence[int]) -> set[int]:
    """Which of ``ids`` (a few hundred candidates) match the FTS5 ``expression``.

    Why not ``MATCH ? AND rowid IN (...)`` on the real index: FTS5 walks the whole doclist of
    every OR-ed word before it looks at the rowids (~6 ms a hybrid query at 100k rows); the
    candidates' own text in the scratch table answers in about a millisecond.
    """
    unique = list(dict.fromkeys(int(i) for i in ids))
    if not unique:
        return set()
    with _scratch_of(conn, kind, unique) as (scratch, name):
        sql = f"SELECT rowid FROM {name} WHERE {name} MATCH ?"
        return {int(r[0]) for r in scratch.execute(sql, (expression,))}


@contextmanager
def _scratch_of(
    conn: sqlite3.Connection, kind: Kind, ids: list[int]
) -> Iterator[tuple[sqlite3.Connection, str]]:
    """The scratch table holding just ``ids``' text, expanded as the real index expands it.

    One transaction, rolled back on exit: FTS5 flushes a segment per commit (autocommit would
    make one per row), and the rollback leaves the scratch table empty for the next caller.
    """
    fts_table, table, _ = fts._TABLES[kind]
    scratch, name = _scratch(conn, fts_table)
    columns = ", ".join(_columns(conn, fts_table))  # external content: the table's own names
    texts: list[tuple[Any, ...]] = []
    for start in range(0, len(ids), 500):  # SQLite caps host parameters
        chunk = ids[start : start + 500]
        sql = f"SELECT id, {columns} FROM {table} WHERE id IN ({', '.join('?' * len(chunk))})"
        # Expanded as the real index expands its text (CamelCase words gain their parts).
        texts.extend(
            (r[0], *(split_identifiers(v) for v in tuple(r)[1:])) for r in conn.execute(sql, chunk)
        )
    marks = ", ".join("?" * (len(texts[0]) if texts else 1))
    scratch.execute("BEGIN")
    try:
        scratch.execute(f"INSERT INTO {name} ({name}) VALUES ('delete-all')")
        if texts:
            scratch.executemany(f"INSERT INTO {name} (rowid, {columns}) VALUES ({marks})", texts)
        yield scratch, name
    finally:
        scratch.execute("ROLLBACK")  # the scratch table is empty again


_local = threading.local()
_TOKENIZE = re.compile(r"tokenize\s*=\s*'((?:[^']|'')*)'", re.IGNORECASE)


def _columns(conn: sqlite3.Connection, fts_table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({fts_table})")]


def _scratch(conn: sqlite3.Connection, fts_table: str) -> tuple[sqlite3.Connection, str]:
    """This thread's in-memory database and its copy of ``fts_table``'s shape (made once).

    Contentless (``content=''``): it only answers which rows match, which is all we ask.
    """
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (fts_table,)).fetchone()
    found = _TOKENIZE.search(str(row[0]) if row else "")
    tokenize = found.group(1).replace("''", "'") if found else "porter unicode61"
    columns = _columns(conn, fts_table)
    key = (fts_table, tuple(columns), tokenize)
    made: dict[tuple[str, tuple[str, ...], str], str] = getattr(_local, "made", {})
    scratch: sqlite3.Connection | None = getattr(_local, "conn", None)
    if scratch is None:
        scratch = sqlite3.connect(":memory:", isolation_level=None)
        _local.conn, _local.made, made = scratch, {}, {}
    if key not in made:
        name = f"scratch_{len(made)}"
        quoted = tokenize.replace("'", "''")
        scratch.execute(
            f"CREATE VIRTUAL TABLE {name} USING fts5({', '.join(columns)}, content='',"
            f" tokenize='{quoted}')"
        )
        made[key] = name
        _local.made = made
    return scratch, made[key]
