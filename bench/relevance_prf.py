"""Pseudo-relevance feedback for hybrid recall, chosen by leave-one-set-out CV (issue 21).

Why: on the held-out benchmark the vector side alone is weak (hit@10 0.505 against full text's
0.667) and multi-hop evidence is rarely in the fused top 50. Hybrid's first page is much
better than either side alone, so its first hits are good feedback: a query moved towards them
may reach evidence that shares neither the question's words nor its embedding. Two variants,
both without a model call at query time:

- ``vprf`` (Rocchio on the query embedding): from the first ranking's top ``k`` hits (``src``
  ``fused``: hybrid before the second stage, what a cheap implementation has in hand;
  ``final``: the page as the service returns it, after the learned stage), optionally only
  the hits both sides found (``agree``), ``q' = normalise(α·q + (1 − α)·mean(v_hits))`` from
  their stored vectors; then the real engine searches again with ``q'`` as the vector side's
  query (its list and the cosines it gives the full-text hits), fused and reordered by the
  shipped stage as always;
- ``rm3`` (full text, RM3-style, ``workbench/recall/feedback.py``): the expansion words are
  taken from the first ranking's top ``k`` hybrid hits (equal weight each), not from the
  full-text side's own first hits, and run as a second BM25 query interpolated into the
  full-text list at ``w`` (``feedback.interpolate``); then the engine fuses as always.
  ``rm3fts`` is the shipped ``search_feedback_weight`` (words from full text's own first
  hits), rejected twice by ``bench/relevance_cv.py``, re-measured as a control.

Every list comes from the real ``SearchEngine`` with the service's settings
(``load_settings``: the learned second stage on) on each set's real store and FAISS index,
the question's project filter, 50 deep; the PRF variants swap only the vector side's query
(a ranker holding ``q'``) or the expansion words (``feedback.expansion_terms`` patched for
the second search). Sets: ``bench/relevance_sets.py`` (never the held-out benchmark).

Protocol: every grid point includes "off" (hybrid as shipped). The row of set S uses, per
variant, the point that maximises the mean over the *other* sets of each set's
class-balanced (R@5 + R@10 + MRR) / 3 (ties to off). Rows: fts, vector, hybrid and each
variant held out, per set and per question class: share R@5 / R@10, hit@10 (any evidence in
the top 10, the held-out benchmark's reading), MRR, session R@10; ``!`` marks a held-out row
below the better single part by more than 0.005 on R@5, R@10 or MRR, ``<`` below hybrid by
as much. Per set, the questions whose hit@10 the variant wins / loses against hybrid.

Latency: each method's whole search in process (the query's embedding cached), taking turns
question by question, on a shared 2-core box. A PRF search here is the first search plus a
second whole search (its full-text side and second stage run twice), so its "added" figure
is an upper bound of what an implementation in the engine would add (one more vector scan and
one more fusion; the scan alone is printed too: ``scan``).

A third pair takes the session as feedback (``svprf`` / ``srm3``): the turns of the final
page's first hit's session within ``n`` ids of it (the hit included) are the feedback
documents, for Rocchio or for RM3's words.

Result (i21-prf, on 114f75d's search code: this branch changes none; 8 sets, 984 questions,
one run, the lists pickled with ``--cases``; a 2-core box shared with other helpers' benches,
load average 2.8-3.8): **nothing is shipped**. No variant wins held out on the mean, and
each loses somewhere beyond 0.005. The points chosen leaving each set out (variant prefix
dropped; ``final``/``fused``: the first ranking; k hits; ``agree``/``all``; α; n: the
session window; t: words; w: weight):

    held out       vprf                 rm3         rm3fts svprf     srm3
    coding         final:k1:agree:a0.93 k5:t4:w0.15 w0.15  n2:a0.93  n2:t8:w0.15
    conversations  off                  k5:t8:w0.15 w0.15  n2:a0.93  n2:t8:w0.15
    meetings       off                  k5:t4:w0.15 w0.15  off       n5:t8:w0.15
    committee      off                  k5:t4:w0.05 w0.15  n2:a0.93  n2:t8:w0.15
    memorybank     off                  k5:t4:w0.15 w0.15  off       off
    friends        off                  k5:t4:w0.15 w0.15  off       n2:t8:w0.15
    hotpot         off                  k5:t4:w0.15 w0.15  n5:a0.93  n2:t4:w0.05
    musique        off                  k3:t4:w0.05 w0.15  n2:a0.93  n2:t8:w0.05

Class-balanced (R@5 + R@10 + MRR) / 3, held out:

    set            hybrid  +vprf   +rm3    +rm3fts +svprf  +srm3
    coding         0.8463  0.8335  0.8460  0.8502  0.8385  0.8485
    conversations  0.9073  0.9073  0.9035  0.9073  0.9023  0.9076
    meetings       0.3085  0.3085  0.3097  0.3070  0.3085  0.3074
    committee      0.5661  0.5661  0.5665  0.5656  0.5657  0.5637
    memorybank     0.8122  0.8122  0.8191  0.8198  0.8122  0.8122
    friends        0.5789  0.5789  0.5782  0.5818  0.5789  0.5755
    hotpot         0.7858  0.7858  0.7836  0.7856  0.7839  0.7844
    musique        0.5959  0.5959  0.5936  0.5975  0.5946  0.5924
    mean           0.6751  0.6735  0.6750  0.6769  0.6731  0.6740

Questions moved against hybrid, every set, held out ((R@5 + R@10 + MRR) / 3 better / worse;
hit@10 won / lost): vprf 2 / 11, 0 / 1; rm3 34 / 42, 1 / 3; rm3fts 38 / 38, 2 / 1; svprf
18 / 32, 0 / 0; srm3 26 / 46, 1 / 3.

Held-out losses beyond 0.005 against hybrid (all questions of a set; ``!``: also below the
better single part): vprf coding R@5 .819 -> .792, R@10 .861 -> .847 (!, below vector
alone), MRR .692 -> .681; rm3 conversations R@5 .925 -> .915 (!), friends R@10 .653 -> .645,
musique R@10 .607 -> .601; rm3fts committee R@10 .519 -> .512, musique R@10 .607 -> .601;
svprf coding R@5 .819 -> .792, conversations R@5 .925 -> .915 (!), committee R@10, hotpot
R@5 .669 -> .659; srm3 committee, friends and musique R@10.

- Rocchio on the query embedding (``vprf``) loses at every one of its 36 points in sample
  (mean −0.0008 at best, α 0.93; −0.016 at α 0.7), most on ``coding`` (one evidence memory
  per question: the page's other hits pull the query off it) and never wins a hit@10; left
  out of every fold but coding's (where it then loses). Its session form (``svprf``) is the
  same, a little worse. A query moved toward the first page finds more of the first page.
- RM3 fed by the fused page (``rm3``, ``srm3``) is within ±0.002 of hybrid in sample and
  below it held out; its words mostly re-find what hybrid already ranks.
- The control, the shipped ``search_feedback_weight`` (words from full text's own first hits,
  off by default, rejected twice by ``bench/relevance_cv.py`` before the learned stage): 0.15
  is chosen in all 8 folds and lifts the mean by +0.0018, but moves 38 questions up and 38
  down, wins 2 hit@10 and loses 1 of 984, and costs committee and musique R@10 0.007 / 0.006:
  noise, with a second BM25 query's cost on every search. It stays 0.

Latency (ms in process, p50 / p95, same run and box): hybrid 5-15 / 12-38 by set; the
composed PRF searches here roughly double it (a second whole search), an upper bound; what
an engine implementation of ``vprf`` adds beyond one more fusion, one more vector scan, is
0.1-0.3 ms p50 at these set sizes (≤ 6k memories; ~7 ms at 100k by issue 21's figures).

Without the second stage (``--no-stage``: every search, hybrid included, in fused order; same
box, load average 4-5), so that the stage reading q''s cosines (it was fitted on q's) is
not what sinks ``vprf``: the same verdict. Held-out mean: hybrid 0.6544, vprf 0.6511, rm3
0.6529, rm3fts 0.6539, svprf 0.6503, srm3 0.6547 (+0.0003: 9 questions better, 15 worse);
vprf moves 0 questions up and 17 down (hit@10 0 / 3), its best point in sample −0.0031
(coding −0.026), svprf's −0.0006. Pulling q toward the fused page does not help the fusion
either.

The second list as a third ranker beside the first (the vector part a mix (1 − λ)·cos(q, d) +
λ·cos(q', d)) is Rocchio with another α up to q''s norm (cos(q', d) is linear in cos(q, d)
and cos(mean, d)), so the α grid stands for it.

PRF only as a candidate source for the learned stage (q' widening the stage's 30 candidates
while its features keep the original query's cosine, the stage refitted held out on them):
``bench/relevance_prf_pool.py``, rejected there too (the ceiling it adds is the fused list's
places 31-50, and every variant loses somewhere beyond 0.005).

Usage: nice -n 10 .venv/bin/python bench/relevance_prf.py [--set NAME ...] [--cases PATH]
       [--no-stage] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import relevance_readings  # noqa: E402
from bench.relevance_rerank import _filters  # noqa: E402
from bench.relevance_sets import CLASSES, Loaded, available_sets, load, minilm  # noqa: E402
from workbench.recall import feedback  # noqa: E402
from workbench.recall.search import SearchEngine  # noqa: E402
from workbench.settings import load_settings  # noqa: E402

DEPTH = 50
TOLERANCE = 0.005
# vprf grid: where the feedback hits come from, how many, only those both sides found, α.
SOURCES = ("fused", "final")
VPRF_K = (1, 3, 5)
VPRF_AGREE = (False, True)
VPRF_ALPHA = (0.7, 0.85, 0.93)
# rm3 grid: feedback hits (from the final page), expansion words, the expansion's weight.
RM3_K = (3, 5)
RM3_TERMS = (4, 8)
RM3_WEIGHT = (0.05, 0.15, 0.35)
RM3FTS_WEIGHT = (0.05, 0.15, 0.35)
# session as feedback: the final page's first hit's session, its turns within ``window`` ids
SESSION_WINDOW = (2, 5, 20)
SVPRF_ALPHA = (0.85, 0.93)
SRM3_TERMS = (4, 8)
SRM3_WEIGHT = (0.05, 0.15)
OFF = "off"
VARIANTS = ("vprf", "rm3", "rm3fts", "svprf", "srm3")


def vprf_key(src: str, k: int, agree: bool, alpha: float) -> str:
    return f"vprf:{src}:k{k}:{'agree' if agree else 'all'}:a{alpha}"


def rm3_key(k: int, terms: int, weight: float) -> str:
    return f"rm3:k{k}:t{terms}:w{weight}"


def rm3fts_key(weight: float) -> str:
    return f"rm3fts:w{weight}"


def svprf_key(window: int, alpha: float) -> str:
    return f"svprf:n{window}:a{alpha}"


def srm3_key(window: int, terms: int, weight: float) -> str:
    return f"srm3:n{window}:t{terms}:w{weight}"


def grid(variant: str) -> list[str]:
    """Every point of ``variant``'s grid, "off" first (ties go to it)."""
    if variant == "vprf":
        return [OFF] + [
            vprf_key(*p) for p in itertools.product(SOURCES, VPRF_K, VPRF_AGREE, VPRF_ALPHA)
        ]
    if variant == "rm3":
        return [OFF] + [rm3_key(*p) for p in itertools.product(RM3_K, RM3_TERMS, RM3_WEIGHT)]
    if variant == "svprf":
        return [OFF] + [svprf_key(*p) for p in itertools.product(SESSION_WINDOW, SVPRF_ALPHA)]
    if variant == "srm3":
        return [OFF] + [
            srm3_key(*p) for p in itertools.product(SESSION_WINDOW, SRM3_TERMS, SRM3_WEIGHT)
        ]
    return [OFF] + [rm3fts_key(w) for w in RM3FTS_WEIGHT]


@dataclass
class Case:
    """One question: its set and class, evidence, and each method's ranked ids."""

    set: str
    cls: str
    gold: tuple[int, ...]
    lists: dict[str, list[int]] = field(default_factory=dict)
    ms: dict[str, float] = field(default_factory=dict)


class QueryVectorRanker:
    """``VectorRanker`` whose query embedding is ``vector`` whatever the text (``q'``)."""

    name = "minilm"

    def __init__(self, index: Any, vector: Any) -> None:
        self.index = index
        self.vector = vector

    def available(self) -> bool:
        return True

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        found: list[tuple[int, float]] = self.index.search(self.vector, k, allowed_ids)
        return found


def stored_vectors(loaded: Loaded) -> dict[int, Any]:
    """id -> the vector the index holds for it (the embeddings cache's, as the index's)."""
    ids = [int(r[0]) for r in loaded.conn.execute("SELECT id FROM observations ORDER BY id")]
    matrix = loaded.ranker.embedder.embed(loaded.texts)
    return dict(zip(ids, matrix, strict=True))


def rocchio(q: Any, feedback_vectors: Sequence[Any], alpha: float) -> Any:
    """``normalise(α·q + (1 − α)·mean(feedback))``."""
    import numpy as np

    moved = alpha * q + (1 - alpha) * np.mean(np.stack(feedback_vectors), axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(np.float32) if norm > 0 else q


def sessions_of(conn: Any) -> dict[int, str]:
    sql = "SELECT id, content_session_id, project FROM observations"
    return {int(i): f"{p}\x00{s}" for i, s, p in conn.execute(sql)}


def session_turns(conn: Any, hit: int, window: int) -> list[int]:
    """The turns of ``hit``'s session (same project) within ``window`` ids of it, itself too."""
    sql = (
        "SELECT o.id FROM observations o JOIN observations h ON h.id = ?"
        " WHERE o.content_session_id IS h.content_session_id AND o.project = h.project"
        " AND o.id BETWEEN ? AND ? ORDER BY o.id"
    )
    return [int(r[0]) for r in conn.execute(sql, (hit, hit - window, hit + window))]


def collect(loaded: Loaded, data_dir: Path, stage: bool = True) -> list[Case]:
    """Every question's lists for every method and grid point (see the module docstring).
    ``stage`` False: every search without the second stage (``--no-stage``)."""
    settings = load_settings(data_dir, search_rerank=stage)
    no_stage = load_settings(data_dir, search_rerank=False)
    with_feedback = {
        w: load_settings(data_dir, search_feedback_weight=w, search_rerank=stage)
        for w in sorted({*RM3_WEIGHT, *RM3FTS_WEIGHT, *SRM3_WEIGHT})
    }
    engine = SearchEngine(loaded.conn, settings, loaded.ranker)
    fused_engine = SearchEngine(loaded.conn, no_stage, loaded.ranker)
    vecs = stored_vectors(loaded)
    index = loaded.ranker.index
    original_terms = feedback.expansion_terms
    cases = []
    for q in loaded.questions:
        filters = _filters(loaded, q.text)
        case = Case(loaded.name, q.cls, tuple(q.relevant))

        def run(
            key: str,
            eng: SearchEngine,
            mode: str = "hybrid",
            before: float = 0.0,
            case: Case = case,
            filters: Any = filters,
            text: str = q.text,
        ) -> list[Any]:
            started = time.perf_counter()
            found = eng.search(text, filters, types="observations", mode=mode, limit=DEPTH)
            case.ms[key] = before + (time.perf_counter() - started) * 1000
            case.lists[key] = [h.id for h in found.observations]
            return list(found.observations)

        run("fts", engine, "fts")
        run("vector", engine, "vector")
        final = run("hybrid", engine)
        fused = run("fused", fused_engine)
        first = {"fused": fused, "final": final}
        first_ms = {"fused": case.ms["fused"], "final": case.ms["hybrid"]}
        qvec = loaded.ranker.embedder.embed([q.text])[0]
        allowed = None
        if filters is not None:
            project = q.project
            allowed = [
                int(r[0])
                for r in loaded.conn.execute(
                    "SELECT id FROM observations WHERE project = ?", [project]
                )
            ]
        for src, agree, k in itertools.product(SOURCES, VPRF_AGREE, VPRF_K):
            hits = [h for h in first[src] if not agree or len(h.rankers) == 2][:k]
            for alpha in VPRF_ALPHA:
                key = vprf_key(src, k, agree, alpha)
                if not hits:  # nothing to feed back: the first ranking stands
                    case.lists[key] = case.lists["hybrid"]
                    case.ms[key] = first_ms[src]
                    continue
                started = time.perf_counter()
                moved = rocchio(qvec, [vecs[h.id] for h in hits], alpha)
                prf = QueryVectorRanker(index, moved)
                setup = (time.perf_counter() - started) * 1000
                run(key, SearchEngine(loaded.conn, settings, prf), before=first_ms[src] + setup)
                if src == "fused" and k == VPRF_K[0] and not agree and alpha == VPRF_ALPHA[0]:
                    started = time.perf_counter()
                    prf.rank(q.text, DEPTH, allowed)
                    case.ms["scan"] = (time.perf_counter() - started) * 1000
        # session as feedback: the turns around the final page's first hit, in its session.
        around = {
            n: session_turns(loaded.conn, final[0].id, n) if final else [] for n in SESSION_WINDOW
        }
        for n, alpha in itertools.product(SESSION_WINDOW, SVPRF_ALPHA):
            key = svprf_key(n, alpha)
            if not around[n]:
                case.lists[key], case.ms[key] = case.lists["hybrid"], case.ms["hybrid"]
                continue
            started = time.perf_counter()
            moved = rocchio(qvec, [vecs[i] for i in around[n]], alpha)
            setup = (time.perf_counter() - started) * 1000
            eng = SearchEngine(loaded.conn, settings, QueryVectorRanker(index, moved))
            run(key, eng, before=case.ms["hybrid"] + setup)
        # rm3: the expansion words of the final page's first k hits (or of the first hit's
        # session's turns: srm3), equal weight each.
        pools: list[tuple[str, list[tuple[int, float]], int, tuple[float, ...]]] = []
        for k, terms in itertools.product(RM3_K, RM3_TERMS):
            pools.append(
                (f"rm3:k{k}:t{terms}", [(h.id, 1.0) for h in final[:k]], terms, RM3_WEIGHT)
            )
        for n, terms in itertools.product(SESSION_WINDOW, SRM3_TERMS):
            pools.append((f"srm3:n{n}:t{terms}", [(i, 1.0) for i in around[n]], terms, SRM3_WEIGHT))
        try:
            for prefix, pool, terms, weights in pools:

                def from_page(
                    conn: Any,
                    query: str,
                    _hits: Any,
                    *,
                    terms: int = terms,
                    pool: Any = pool,
                ) -> list[str]:
                    return original_terms(conn, query, pool, docs=len(pool), terms=terms)

                feedback.expansion_terms = from_page  # type: ignore[assignment]
                for w in weights:
                    key = f"{prefix}:w{w}"
                    if not pool:
                        case.lists[key], case.ms[key] = case.lists["hybrid"], case.ms["hybrid"]
                        continue
                    eng = SearchEngine(loaded.conn, with_feedback[w], loaded.ranker)
                    run(key, eng, before=case.ms["hybrid"])
        finally:
            feedback.expansion_terms = original_terms  # type: ignore[assignment]
        for w in RM3FTS_WEIGHT:
            run(rm3fts_key(w), SearchEngine(loaded.conn, with_feedback[w], loaded.ranker))
        case.lists[OFF] = case.lists["hybrid"]
        case.ms[OFF] = case.ms["hybrid"]
        cases.append(case)
    return cases


# ----- readings and cross-validation ---------------------------------------------------------


def reading(case: Case, key: str, session_of: Mapping[int, str]) -> relevance_readings.Readings:
    return relevance_readings.read(case.lists[key][:DEPTH], case.gold, session_of)


def balanced(cases: Sequence[Case], key: str) -> float:
    """Class-balanced mean of (R@5 + R@10 + MRR) / 3 over ``cases`` (one set's)."""
    per: dict[str, list[float]] = {}
    for c in cases:
        r = relevance_readings.read(c.lists[key][:DEPTH], c.gold)
        per.setdefault(c.cls, []).append((r.r5 + r.r10 + r.mrr) / 3)
    return statistics.fmean(statistics.fmean(v) for v in per.values())


def choose(by_set: Mapping[str, Sequence[Case]], variant: str, train: Sequence[str]) -> str:
    """The grid point with the best mean over ``train`` sets of ``balanced`` (ties: off)."""
    best_key, best = OFF, -1.0
    if not train:  # one set: nothing to choose on but itself, so nothing is chosen
        return OFF
    for key in grid(variant):
        score = statistics.fmean(balanced(by_set[s], key) for s in train)
        if score > best + 1e-12:
            best_key, best = key, score
    return best_key


def means(cases: Sequence[Case], key: str, session_of: Mapping[int, str]) -> dict[str, Any]:
    return relevance_readings.mean([reading(c, key, session_of) for c in cases])


def row(name: str, m: Mapping[str, Any], flag: str = "") -> str:
    sess = "—" if m["sess_r10"] is None else f"{m['sess_r10']:.3f}"
    return (
        f"| {name} | {m['r5']:.3f} | {m['r10']:.3f} | {m['hit10']:.3f} | {m['mrr']:.3f} "
        f"| {sess} | {flag} |"
    )


def flags(mine: Mapping[str, Any], hybrid: Mapping[str, Any], best: Mapping[str, Any]) -> str:
    out = []
    for metric in ("r5", "r10", "mrr"):
        if mine[metric] < best[metric] - TOLERANCE:
            out.append(f"!{metric}")
        if mine[metric] < hybrid[metric] - TOLERANCE:
            out.append(f"<{metric}")
    return " ".join(out)


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def report(by_set: dict[str, list[Case]], sessions: dict[str, dict[int, str]]) -> dict[str, Any]:
    """Print the held-out tables; return them for ``--json``."""
    names = list(by_set)
    chosen = {
        v: {s: choose(by_set, v, [o for o in names if o != s]) for s in names} for v in VARIANTS
    }
    out: dict[str, Any] = {"chosen": chosen, "sets": {}}
    print("\n## held-out points (leave one set out: chosen on the other sets)")
    print("| held-out set | " + " | ".join(VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    for s in names:
        print(f"| {s} | " + " | ".join(chosen[v][s] for v in VARIANTS) + " |")
    overall: dict[str, list[float]] = {k: [] for k in ("hybrid", *VARIANTS)}
    for s in names:
        cases, sess = by_set[s], sessions[s]
        classes = [c for c in CLASSES.get(s, ()) if any(x.cls == c for x in cases)]
        print(f"\n## {s} ({len(cases)} questions; held out)")
        print("| class / method | R@5 | R@10 | hit@10 | MRR | session R@10 | flags |")
        print("|---|---|---|---|---|---|---|")
        table: dict[str, Any] = {}
        for cls in ("all", *classes):
            part = [c for c in cases if cls == "all" or c.cls == cls]
            m = {k: means(part, k, sess) for k in ("fts", "vector", "hybrid")}
            best = {x: max(m["fts"][x], m["vector"][x]) for x in ("r5", "r10", "mrr")}
            for k in ("fts", "vector"):
                print(row(f"{cls} / {k}", m[k]))
            print(row(f"{cls} / hybrid", m["hybrid"], flags(m["hybrid"], m["hybrid"], best)))
            table[cls] = {"fts": m["fts"], "vector": m["vector"], "hybrid": m["hybrid"]}
            for v in VARIANTS:
                mv = means(part, chosen[v][s], sess)
                print(row(f"{cls} / +{v}", mv, flags(mv, m["hybrid"], best)))
                table[cls][v] = mv
        moved = " · ".join(
            f"+{v} +{w}/−{lost}" for v in VARIANTS for w, lost in [_wl(cases, chosen[v][s])]
        )
        print(f"\nhit@10 won / lost against hybrid, questions: {moved}")
        overall["hybrid"].append(balanced(cases, "hybrid"))
        for v in VARIANTS:
            overall[v].append(balanced(cases, chosen[v][s]))
        out["sets"][s] = table
    print("\n## class-balanced (R@5 + R@10 + MRR) / 3, held out")
    print("| set | hybrid | " + " | ".join(f"+{v}" for v in VARIANTS) + " |")
    print("|---|---|" + "---|" * len(VARIANTS))
    for n, s in enumerate(names):
        print(
            f"| {s} | {overall['hybrid'][n]:.4f} | "
            + " | ".join(f"{overall[v][n]:.4f}" for v in VARIANTS)
            + " |"
        )
    print(
        "| mean | "
        + " | ".join(f"{statistics.fmean(overall[k]):.4f}" for k in ("hybrid", *VARIANTS))
        + " |"
    )
    print("\n## questions moved against hybrid, every set, held out")
    print("| variant | (R@5 + R@10 + MRR) / 3 better / worse | hit@10 won / lost |")
    print("|---|---|---|")
    for v in VARIANTS:
        better = worse = won = lost = 0
        for s in names:
            for c in by_set[s]:
                a, b = reading(c, "hybrid", {}), reading(c, chosen[v][s], {})
                d = (b.r5 + b.r10 + b.mrr) - (a.r5 + a.r10 + a.mrr)
                better, worse = better + (d > 1e-9), worse + (d < -1e-9)
                won, lost = won + (b.hit10 > a.hit10), lost + (b.hit10 < a.hit10)
        print(f"| +{v} | {better} / {worse} | {won} / {lost} |")
    latency(by_set, chosen)
    curve(by_set)
    return out


def _wl(cases: Sequence[Case], key: str) -> tuple[int, int]:
    won = lost = 0
    for c in cases:
        a = relevance_readings.read(c.lists["hybrid"][:DEPTH], c.gold).hit10
        b = relevance_readings.read(c.lists[key][:DEPTH], c.gold).hit10
        won += b > a
        lost += b < a
    return won, lost


def latency(by_set: Mapping[str, Sequence[Case]], chosen: Mapping[str, Mapping[str, str]]) -> None:
    print("\n## latency per search, ms in process (p50 / p95; shared 2-core box)")
    print(
        "| set | hybrid | "
        + " | ".join(f"+{v} (held-out point)" for v in VARIANTS)
        + " | scan (one more vector scan) |"
    )
    print("|---|---|" + "---|" * len(VARIANTS) + "---|")
    for s, cases in by_set.items():
        base = [c.ms["hybrid"] for c in cases]
        cells = []
        for v in VARIANTS:
            key = chosen[v][s]
            ms = [c.ms[key] for c in cases]
            cells.append(f"{pct(ms, 0.5):.1f} / {pct(ms, 0.95):.1f}")
        scans = [c.ms["scan"] for c in cases if "scan" in c.ms]
        scan = f"{pct(scans, 0.5):.2f} / {pct(scans, 0.95):.2f}" if scans else "—"
        print(
            f"| {s} | {pct(base, 0.5):.1f} / {pct(base, 0.95):.1f} | "
            + " | ".join(cells)
            + f" | {scan} |"
        )


def curve(by_set: Mapping[str, Sequence[Case]]) -> None:
    """Every grid point in sample: mean balanced score over sets, and its worst set's Δ."""
    print("\n## every grid point, in sample (mean of the sets' balanced score; worst set Δ)")
    print("| point | mean | Δ mean vs hybrid | worst set (Δ) |")
    print("|---|---|---|---|")
    base = {s: balanced(cs, "hybrid") for s, cs in by_set.items()}
    for v in VARIANTS:
        for key in grid(v)[1:]:
            got = {s: balanced(cs, key) for s, cs in by_set.items()}
            worst = min(got, key=lambda s: got[s] - base[s])
            mean = statistics.fmean(got.values())
            print(
                f"| {key} | {mean:.4f} | {mean - statistics.fmean(base.values()):+.4f} "
                f"| {worst} ({got[worst] - base[worst]:+.4f}) |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", dest="sets", help="a set (default: all)")
    parser.add_argument("--cases", type=Path, help="pickle of the collected lists (reused)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--no-stage", action="store_true", help="every search without the second stage"
    )
    args = parser.parse_args()
    names = tuple(args.sets) if args.sets else available_sets()
    stored: dict[str, Any] = {}
    if args.cases and args.cases.exists():
        stored = pickle.loads(args.cases.read_bytes())
    embedder = minilm()
    by_set: dict[str, list[Case]] = {}
    sessions: dict[str, dict[int, str]] = {}
    with tempfile.TemporaryDirectory(prefix="relevance-prf-") as tmp:
        for name in names:
            if name in stored:
                by_set[name], sessions[name] = stored[name]
                continue
            here = Path(tmp) / name
            here.mkdir()
            started = time.perf_counter()
            loaded = load(name, here, embedder)
            by_set[name] = collect(loaded, here, stage=not args.no_stage)
            sessions[name] = sessions_of(loaded.conn)
            loaded.store.close()
            embedder.save()
            print(
                f"{name}: {len(by_set[name])} questions in {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
            if args.cases:
                stored[name] = (by_set[name], sessions[name])
                args.cases.write_bytes(pickle.dumps(stored))
    out = report(by_set, sessions)
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
