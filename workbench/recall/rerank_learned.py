"""The ``learned`` second stage: a linear learning-to-rank model over cheap per-candidate features.

Fusion sees two scores per hit; MaxSim sees the words, but alone it cost the coding set R@10
(issue 21). This stage weighs them together with what the candidate list itself says:

- each ranker's evidence: the fused score and rank, BM25 and its rank, the cosine and its
  rank, found by both;
- the words: the share of the query's content words the memory holds (plain and weighted by
  how rare each word is among the candidates), the longest run of query words in order, the
  query's identifiers held whole;
- MaxSim over MiniLM's word pieces (``rerank_maxsim``), min-max scaled over the candidates;
- agreement around it: a neighbouring turn of its session among the candidates (and that
  neighbour's fused score), the share of the candidates in its session;
- its length (a long memory matches many words by chance);
- its speaker: whether the question names the person a turn's label says spoke it
  (``"Caroline: …"``; a name inside the text is not a label). Recorded chats open each turn
  with one, and "what did Caroline research?" asks for Caroline's turns, not Melanie's turn
  that mentions her. Any short label counts (``speaker_words``); the fit weighs it: held out
  over the eight sets it raised the balanced mean of committee, conversations and friends
  by ~0.004 each and moved no other set by more than 0.002.

The weights are fitted offline by ``bench/relevance_ltr.py`` (pairwise logistic loss; held
out, every relevance set but the one reported; the shipped file on all sets) and live in
``rerank_learned.json`` beside this module, with two limits:

- ``depth``: the most it reorders (the fused top 30);
- ``demotion``: how far below its fused place a candidate may fall. A paraphrase shares no
  word with its answer, so word and MaxSim evidence can push the right memory from fused
  place 3 to 15 (the coding set's R@10 below vector alone, issue 21); the cap keeps every
  fused top-(10 − demotion) hit in the top 10 whatever the model says, while the model can
  still lift a candidate from anywhere in the head. Chosen by the same cross-validation;
- ``pin_gap``: a confident vector first keeps first place (``pinned``). The same paraphrase
  questions lost MRR when the model moved the vector ranker's clear first to place 2 or 3 on
  a word it shares with a distractor. When the fused first is the vector's first, its cosine
  leads every other candidate's by at least the gap, and full text's first is no other
  candidate (full text found nothing, or agrees), it stays first; the model orders the rest.
  An exact identifier that full text puts first elsewhere still overturns it. Chosen by the
  same cross-validation (null: no pin);
- ``session_cap``: the most candidates of one session among the first ``PAGE`` places
  (``spread``). A multi-hop question's evidence spans sessions, and one session that repeats
  the question's words can fill the page, leaving the second evidence session no slot (the
  session term's failure, i21-context). Null (no cap) in the shipped file: across the eight
  relevance sets (``bench/relevance_session_cap.py``) cross-validation chose no cap in 13 of
  13 folds. On our sets the page is rarely one session's: a cap moved only conversations'
  multi-hop R@5 (0.773 -> 0.818 at 2) and musique's session R@10 (0.698 -> 0.724 at 2),
  and it cost the sets whose evidence sits in one session (memorybank R@5 0.893 -> 0.617 at
  2, 0.781 at 3; friends R@10 0.605 -> 0.564 at 2);
- ``session_keep``: every session of the fused top ``session_keep`` keeps a place among the
  first ``PAGE`` (``kept``, applied last). The demotion cap keeps only the fused top 5 on
  the page, so the stage could push an evidence session's best turn from fused places 6-10
  to 11-15, crowded out by turns it lifted from below the page of sessions the page already
  held: friends' session hit@10 fell below full text alone (0.910 against 0.920, the fused
  list 0.930), against issue 21's rule that hybrid never falls below its best single part.
  The rule changes the page only when a session is missing: its best-placed turn takes the
  page's last place, one per missing session, the rest in the stage's order. Chosen with the
  demotion cap by the acceptance penalty (``bench/relevance_session_keep.py``: every figure,
  session hit@10 included, no lower than the better single part nor 0.005 below the stage
  without it): held out (each set's point chosen on the others), six of the eight sets'
  folds chose 7 and committee's and friends' chose none (friends' loss is the only one that
  argues for it), so friends' held-out figure stays 0.910; the same selection on all eight
  sets together (``--final``) chose 7 with the cap at 5, shipped. With 7 fixed (weights held
  out, the point seen on every set): friends session hit@10 0.930 and R@10 0.607 (was
  0.605), musique session hit@10 0.990 (0.980), hotpot R@10 0.763 (0.768), every other
  figure of every set unchanged; no figure of any set below its better single part. Null:
  off.

MaxSim reads the word-piece vectors of the distilled static model (``rerank_tokens.
load_static``), which ``workbench models build`` (so ``make install``) already writes for the
two-tier index: the stage needs nothing built for it alone. Without the static model it does
not run (the fused order, and ``rerank.problem`` says why). No model runs at search time: one
``SELECT`` of ≤ depth rows, word sets, one small matrix product.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from workbench.recall import rerank_features, rerank_maxsim
from workbench.recall.rerank_features import Candidates
from workbench.recall.rerank_tokens import TokenTable
from workbench.recall.session_keys import session_rows

__all__ = [
    "FEATURES",
    "PAGE",
    "Weights",
    "compute",
    "kept",
    "order",
    "parse",
    "spread",
    "weights",
]

WEIGHTS_FILE = Path(__file__).with_name("rerank_learned.json")
PAGE = 10  # the places ``session_cap`` shares out and ``session_keep`` guards (a default page)
_BASE = rerank_features.RANK_FEATURES  # taken as ``rerank_features`` computes them
FEATURES: tuple[str, ...] = (
    *_BASE,
    "phrase",  # longest run of query words held in order / query words (runs of 2+)
    "cover",  # share of the query's content words held (title or body)
    "idf_cover",  # the same, each word weighted by its rarity among the candidates
    "identifier",  # share of the query's identifiers held whole (0 when it has none)
    "maxsim",  # MaxSim over word pieces, min-max scaled over the candidates (0 without table)
    "neighbour",  # a neighbouring turn of its session is among the candidates
    "neighbour_fused",  # that neighbour's best fused score / the list's best
    "session_share",  # share of the candidates in its session
    "length",  # log of its word count, 1 at 256 words
    # Gated by the query's anchor (the best ``cover`` among the candidates: does any of them
    # hold the query's words?). A paraphrase shares no word with its answer, and there MaxSim
    # over out-of-context word pieces favours a distractor that shares one word (the coding
    # set's loss, issue 21); these let the model trust MaxSim and BM25 where the query has
    # an anchor and the cosine where it has none.
    "maxsim_anchored",  # maxsim · anchor
    "maxsim_unanchored",  # maxsim · (1 − anchor)
    "cosine_unanchored",  # cosine_rel · (1 − anchor)
    "fts_anchored",  # fts · anchor
    "maxsim_cover",  # maxsim · cover
    "speaker",  # the query names the speaker its text opens with ("Caroline: …")
)
# The columns that need the token table (bench/relevance_ltr.py zeroes them for its row
# "no maxsim", which shows what the stage would be worth without it).
MAXSIM_COLUMNS = ("maxsim", "maxsim_anchored", "maxsim_unanchored", "maxsim_cover")


@dataclass(frozen=True)
class Weights:
    """A linear scorer over ``FEATURES``, and the depth it was fitted at (the most it reorders)."""

    values: tuple[float, ...]
    depth: int = 30
    demotion: int | None = None  # the most places below its fused one a candidate may fall
    pin_gap: float | None = None  # the cosine lead that keeps a vector first first (``pinned``)
    session_cap: int | None = None  # the most of one session on the first page (``spread``)
    session_keep: int | None = None  # the fused top whose sessions keep a page place (``kept``)

    def score(self, row: Sequence[float]) -> float:
        return math.fsum(w * x for w, x in zip(self.values, row, strict=True))


def parse(doc: Mapping[str, Any]) -> Weights:
    """The weights in the weights file's JSON; raises ValueError/KeyError/TypeError on a bad one."""
    if doc.get("features") != list(FEATURES):
        raise ValueError("the weights file names other features; run bench/relevance_ltr.py")
    values = tuple(float(doc["weights"][name]) for name in FEATURES)
    if not all(math.isfinite(v) for v in values):
        raise ValueError("a weight is not a finite number")
    depth = doc["depth"]
    if not isinstance(depth, int) or isinstance(depth, bool) or not 2 <= depth <= 200:
        raise ValueError("the depth must be a whole number from 2 to 200")
    demotion = _optional_whole(doc, "demotion", 0, 200)
    pin_gap = doc.get("pin_gap")
    if pin_gap is not None and (
        not isinstance(pin_gap, (int, float))
        or isinstance(pin_gap, bool)
        or not 0.0 <= pin_gap <= 1.0  # NaN fails this too
    ):
        raise ValueError("the pin_gap must be null or a number from 0 to 1")
    session_cap = _optional_whole(doc, "session_cap", 1, PAGE)
    session_keep = _optional_whole(
        doc,
        "session_keep",
        1,
        PAGE,
        " (how many of the fused first hits keep their session on the first page)",
    )
    gap = None if pin_gap is None else float(pin_gap)
    return Weights(values, depth, demotion, gap, session_cap, session_keep)


def _optional_whole(
    doc: Mapping[str, Any], name: str, low: int, high: int, why: str = ""
) -> int | None:
    """``doc[name]``: null, or a whole number from ``low`` to ``high`` (a bool is not one)."""
    value = doc.get(name)
    if value is not None and (
        not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high
    ):
        raise ValueError(f"the {name} must be null or a whole number from {low} to {high}{why}")
    return value


@functools.lru_cache(maxsize=1)
def weights() -> Weights:
    """The shipped weights (read once)."""
    return parse(json.loads(WEIGHTS_FILE.read_text(encoding="utf-8")))


def _sessions(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
    """``id -> (project, session)`` of ``ids`` and the ids beside them (one primary-key
    lookup); the session is None for a memory that has none."""
    wanted = [j for i in ids for j in (i - 1, i, i + 1)]
    return {i: (project, session) for i, (session, project) in session_rows(conn, wanted).items()}


def _feature_keys(found: Mapping[int, tuple[str, str | None]]) -> dict[int, str]:
    """The features' session key: a project's memories without a session count as one
    session, as when the shipped weights were fitted."""
    return {i: f"{project}\x00{session}" for i, (project, session) in found.items()}


def _cap_keys(found: Mapping[int, tuple[str, str | None]]) -> dict[int, str]:
    """The session cap's key: only memories with a session (``spread``: one without a
    session never waits)."""
    return {
        i: f"{project}\x00{session}"
        for i, (project, session) in found.items()
        if session is not None
    }


_LABEL = re.compile(r"\s*([^\W\d_][^:\n]{0,39}):\s")


def speaker_words(title: str) -> frozenset[str]:
    """The words of the speaker label a turn opens with (``"Ross and Rachel: …"``), none
    when it opens with no label."""
    found = _LABEL.match(title)
    return frozenset() if found is None else _label_words(found.group(1))


def clear_cache() -> None:
    """Forget the cached speaker labels' words (a forget: ``text_caches``)."""
    _label_words.cache_clear()


@functools.lru_cache(maxsize=4096)
def _label_words(label: str) -> frozenset[str]:
    """Cached by the label (≤ 40 characters), not the title: a cache keyed by whole titles
    kept thousands of memories' texts resident."""
    return frozenset(rerank_features.query_words(label)) - {"and"}


def compute(
    conn: sqlite3.Connection,
    query: str,
    candidates: Candidates,
    maxsim: Sequence[float] | None = None,
    loaded: Mapping[int, rerank_features.ObsText] | None = None,
    sessions: Mapping[int, tuple[str, str | None]] | None = None,
) -> tuple[list[int], list[list[float]]]:
    """``(ids, rows)``: one row per fused candidate in ``FEATURES`` order.

    ``maxsim``: the candidates' raw MaxSim scores (``rerank_maxsim.scores``), or None for a 0
    column. ``loaded``: their ``rerank_features.load_texts`` when already read; ``sessions``:
    their ``_sessions`` when already looked up. A candidate deleted since it was indexed
    keeps its rank features only.
    """
    ids = [i for i, _ in candidates.fused]
    texts = loaded if loaded is not None else rerank_features.load_texts(conn, ids)
    base_ids, base_rows = rerank_features.compute(conn, query, candidates, texts)
    take = [rerank_features.FEATURES.index(name) for name in (*_BASE, "phrase", "identifier")]
    q_words = rerank_features.query_words(query)
    held: list[set[str]] = []
    lengths: list[int] = []
    for i in ids:
        found = texts.get(i)
        # Title and body apart, as ``rerank_features`` reads them (its cache, or the row
        # ``load_texts`` found, then serves both).
        bag = [*chain.from_iterable(rerank_features.text_words(found))] if found else []
        held.append(set(bag))
        lengths.append(len(bag))
    present = {w: sum(w in h for h in held) for w in q_words}
    idf = {w: math.log((len(ids) + 1) / (1 + present[w])) + 1.0 for w in q_words}
    idf_total = math.fsum(idf.values())
    session = _feature_keys(sessions if sessions is not None else _sessions(conn, ids))
    in_list = set(ids)
    fused_top = max((s for _, s in candidates.fused), default=0.0)
    fused_of = dict(candidates.fused)
    # Each session's candidates, counted in one pass (a sum per session was quadratic).
    count = Counter(session.get(i) for i in ids)
    share = {s: count[s] / len(ids) for s in set(session.values())}
    if maxsim is not None and len(maxsim) == len(ids):
        low, high = min(maxsim), max(maxsim)
        scaled = [(m - low) / (high - low) if high > low else 0.0 for m in maxsim]
    else:
        scaled = [0.0] * len(ids)
    covers = [sum(w in h for w in q_words) / len(q_words) if q_words else 0.0 for h in held]
    anchor = max(covers, default=0.0)
    asked = set(q_words)
    rows = []
    for n, (i, base) in enumerate(zip(ids, base_rows, strict=True)):
        picked = [base[k] for k in take]
        words = held[n]
        near = [
            j
            for j in (i - 1, i + 1)
            if j in in_list and i in session and session.get(j) == session[i]
        ]
        best_near = max((fused_of.get(j, 0.0) for j in near), default=0.0)
        fts, cosine_rel = picked[2], picked[5]
        rows.append(
            [
                *picked[: len(_BASE)],
                picked[len(_BASE)],  # phrase
                covers[n],
                math.fsum(idf[w] for w in q_words if w in words) / idf_total if q_words else 0.0,
                picked[len(_BASE) + 1],  # identifier
                scaled[n],
                1.0 if near else 0.0,
                best_near / fused_top if fused_top > 0 else 0.0,
                share.get(session[i], 0.0) if i in session else 0.0,
                min(1.0, math.log1p(lengths[n]) / math.log1p(256)),
                scaled[n] * anchor,
                scaled[n] * (1.0 - anchor),
                cosine_rel * (1.0 - anchor),
                fts * anchor,
                scaled[n] * covers[n],
                1.0 if i in texts and asked & speaker_words(texts[i]["title"]) else 0.0,
            ]
        )
    return ids, rows


def ranked(
    model: Weights,
    ids: Sequence[int],
    rows: Sequence[Sequence[float]],
    session_of: Mapping[int, str] | None = None,
) -> list[int]:
    """``ids`` (in fused order) best first by ``model``; equal scores keep the fused order;
    at most ``model.session_cap`` of one session (``session_of``) on the first page
    (``spread``); none placed more than ``model.demotion`` below its fused place (``capped``:
    it wins over the session cap); then every session of the fused top ``model.session_keep``
    on the first page (``kept``, last: it wins over the demotion cap; each turn it lifts onto
    the page pushes the ones it passes one place further down)."""
    import numpy as np

    if not ids:
        return []
    values = np.asarray(rows, dtype=np.float64) @ np.asarray(model.values, dtype=np.float64)
    scored = sorted(
        ((float(v), -n, i) for n, (i, v) in enumerate(zip(ids, values, strict=True))),
        reverse=True,
    )
    order = [i for _, _, i in scored]
    if pinned(rows, model.pin_gap):
        order.remove(ids[0])
        order.insert(0, ids[0])
    if model.session_cap is not None and session_of:
        order = spread(order, session_of, model.session_cap)
    order = capped(order, ids, model.demotion)
    if model.session_keep is not None and session_of:
        order = kept(order, ids, session_of, model.session_keep)
    return order


def kept(
    order: Sequence[int], fused: Sequence[int], session_of: Mapping[int, str], top: int | None
) -> list[int]:
    """``order`` with every session of ``fused[:top]`` on its first ``PAGE`` places: the page
    is filled in ``order``, except that when the places left are no more than the sessions
    still missing, the next place goes to the best-placed turn of a missing session. None:
    ``order`` as it is. An id without a session (not in ``session_of``) needs no place.

    Why: a demotion cap of d keeps only the fused top 10 − d on the page, so the stage could
    push an evidence session's best turn from fused places 6-10 to 11-15, crowded out by turns
    it lifted of sessions the page already held (friends' session hit@10 below full text
    alone, issue 21, ``bench/relevance_session_keep.py``). Only the last places move, and
    only as many as there are sessions missing."""
    if top is None:
        return list(order)
    needed = {session_of[i] for i in fused[:top] if i in session_of}
    pending = list(order)
    out: list[int] = []
    have: set[str] = set()
    for place in range(min(PAGE, len(pending))):
        missing = needed - have
        pick = pending[0]
        if len(missing) >= PAGE - place:
            pick = next((i for i in pending if session_of.get(i) in missing), pick)
        pending.remove(pick)
        out.append(pick)
        if pick in session_of:
            have.add(session_of[pick])
    return out + pending


def spread(order: Sequence[int], session_of: Mapping[int, str], cap: int) -> list[int]:
    """``order`` with at most ``cap`` ids of one session among its first ``PAGE`` places: the
    page is filled in order, an id whose session already holds ``cap`` places waits; then
    everything else in order (so the held back come just below the page, or fill it when the
    other sessions cannot). An id without a session never waits."""
    page: list[int] = []
    held: dict[str, int] = {}
    for i in order:
        if len(page) == PAGE:
            break
        key = session_of.get(i)
        if key is not None:
            if held.get(key, 0) >= cap:
                continue
            held[key] = held.get(key, 0) + 1
        page.append(i)
    if len(page) < PAGE:
        placed = set(page)
        page += [i for i in order if i not in placed][: PAGE - len(page)]
    placed = set(page)
    return page + [i for i in order if i not in placed]


_COSINE = FEATURES.index("cosine")
_VECTOR_RR = FEATURES.index("vector_rr")
_FTS_RR = FEATURES.index("fts_rr")


def pinned(rows: Sequence[Sequence[float]], gap: float | None) -> bool:
    """Whether the fused first (``rows[0]``) keeps first place: it is the vector ranker's first,
    its cosine leads every other candidate's by at least ``gap``, and full text's first is no
    other candidate. None: never."""
    if gap is None or len(rows) < 2 or rows[0][_VECTOR_RR] != 1.0:
        return False
    if any(r[_FTS_RR] == 1.0 for r in rows[1:]):
        return False
    return rows[0][_COSINE] - max(r[_COSINE] for r in rows[1:]) >= gap


def capped(order: Sequence[int], fused: Sequence[int], demotion: int | None) -> list[int]:
    """``order`` with every id placed at most ``demotion`` places below its place in ``fused``
    (None: ``order`` as it is). Place by place: the id whose limit is reached goes there (the
    earliest limit first), else the next id of ``order``; the limits are distinct and grow with
    the place, so every one is met."""
    if demotion is None:
        return list(order)
    limit = {i: n + demotion for n, i in enumerate(fused)}
    pending = list(order)
    out: list[int] = []
    for place in range(len(pending)):
        due = [i for i in pending if limit.get(i, len(order)) <= place]
        pick = min(due, key=lambda i: limit[i]) if due else pending[0]
        pending.remove(pick)
        out.append(pick)
    return out


def order(
    conn: sqlite3.Connection,
    query: str,
    candidates: Candidates,
    top_n: int,
    table: TokenTable,
    model: Weights | None = None,
    *,
    first_only: bool = False,
) -> list[tuple[int, float]]:
    """The fused list with its first ``top_n`` reordered (ties: fused order), at most the
    model's own depth (its features, ranks among the candidates, mean what they meant when
    it was fitted).

    ``table``: the word-piece vectors (``rerank_tokens.load_static()``); ``model``: the shipped
    weights unless given. Raises on any failure (the caller falls back to the fused order).
    ``first_only``: only the first hit is wanted (the timeline's anchor): when the pin rule
    keeps the fused first (``pinned``, decided by the rank features alone), the fused list
    comes back as it is, without reading a text or scoring a candidate.
    """
    model = model or weights()
    top_n = min(top_n, model.depth)
    head, tail = candidates.fused[:top_n], candidates.fused[top_n:]
    if len(head) < 2:
        return list(candidates.fused)
    sub = Candidates(head, candidates.text, candidates.vector, candidates.cosines)
    if first_only and pinned(rerank_features.rank_rows(sub), model.pin_gap):
        return list(candidates.fused)
    head_ids = [i for i, _ in head]
    # One SELECT for every feature, with the texts' kept words and pieces (``token_rows``).
    loaded = rerank_features.load_texts(conn, head_ids)
    maxsim = rerank_maxsim.loaded_scores(table, query, head_ids, loaded)
    found = _sessions(conn, head_ids)  # one lookup for the features and the session cap
    ids, rows = compute(conn, query, sub, maxsim, loaded, found)
    fused = dict(head)
    paged = model.session_cap is not None or model.session_keep is not None
    session_of = _cap_keys(found) if paged else None
    reordered = [(i, fused[i]) for i in ranked(model, ids, rows, session_of)]
    if sorted(i for i, _ in reordered) != sorted(i for i, _ in head):
        raise RuntimeError("the reranker changed the candidate set")
    return reordered + list(tail)
