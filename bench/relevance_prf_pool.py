"""Pseudo-relevance feedback as an extra candidate source for the learned stage (issue 21).

Why: ``bench/relevance_prf.py`` measured PRF as a *replacement* of the query (Rocchio on the
embedding, RM3 on the words, the first hit's session as feedback) and rejected every variant
held out: a query moved towards the first page finds more of the first page. Left to try: keep
the query, and let PRF only *add* candidates to what the learned stage
(``workbench/recall/rerank_learned.py``) reads, with the moved query's cosine as one more
feature, the stage refitted held out. That can only help if the extra source reaches gold
memories the fused top 30 lacks, so this bench measures that first:

- the pool ceiling, per set: the share of questions with a gold memory among the stage's
  candidates (hit), and the mean share of their gold memories there (recall), for the fused
  top 30 (today), for the fused top 30 plus each extra source, and for the control that adds
  as many candidates from fused places 31 on (what a deeper stage would read);
- the sources (``SOURCES``): ``rocchio:k:a:+m``: ``q' = normalise(α·q + (1 − α)·mean(v))``
  over the stored vectors ``v`` of the fused top ``k`` (hybrid before the stage: what the
  engine has in hand), then the first ``m`` hits of a vector search with ``q'`` (the
  question's project filter) that the fused top 30 lacks; ``session:n``: the turns of the
  fused first's session within ``n`` ids of it that the top 30 lacks; ``fused+m``: the
  control, fused places 31 to 30 + m.

``--fit``: then, for the extra sources named (``--variant``), the stage refitted and scored
the way ``bench/relevance_stage_lists.py`` does (``relevance_ltr.choose`` / ``fit`` on the
training sets only; each fit set left out in turn; the never-fitted sets by the model of all
fit sets), with two more columns (``EXTRA``): ``prf_cos`` (the candidate's cosine with ``q'``)
and ``added`` (reached only by the extra source), against ``d30`` refitted the same way.
The added candidates get the rank features the engine would give them (their fused score
when fused ranked them past 30, else 0; their cosine with ``q`` from the stored vector).

Latency (``--latency``): in process, per question, the extra source alone (Rocchio and one vector
search with ``q'``), and the stage's rows over the wider list against the top 30; at 100k
the scan is estimated from a flat index of 100k random unit vectors searched the same way.

Sets: ``bench/relevance_sets.py`` (never the held-out public benchmark).

Result (i21-cand, on 582fcef's search code: this bench changes none; 8 sets, 984
questions, one run per table, a 2-core box shared with other helpers, load average 2-6):
**nothing is shipped**: no variant wins held out on the mean and loses nowhere beyond 0.005.

The ceiling moves, but no more than reading deeper does. Questions with a gold memory among
the stage's candidates, mean over the 8 sets (friends, the set where full text beats the
embedding, moves most): d30 0.937; ``fused+10`` 0.957, ``fused+20`` 0.962; Rocchio ``+10``
0.945-0.948, ``+20`` 0.959-0.962; ``session:n2`` 0.947 (+2.4 candidates), ``session:n5``
0.952 (+6.1). Rocchio reaches a gold memory beyond the fused top 50 for 0-7 of 984
questions (all on friends): ``q'`` mostly re-finds fused places 31-50. The session source
reaches 15 such on friends (window 5), 1 each on committee, hotpot, meetings.

Refitted held out (``--fit``), class-balanced (R@5 + R@10 + MRR) / 3 over the 8 sets and
mean hit@10: d30 (today's list, refitted the same way) 0.6613 / 0.9034; ``d30+prf`` (the
``q'`` cosine on today's list) the same to 4 places; ``fused+10`` 0.6613 / 0.9076;
``rocchio:k3:a0.85:+10`` 0.6620 / 0.9036, ``+prf`` 0.6625 / 0.9036; ``rocchio:k3:a0.7:+10
+prf`` 0.6624 / 0.9030; ``rocchio:k5:a0.85:+20+prf`` 0.6613 / 0.9061; ``session:n2`` 0.6587 /
0.9066, ``+prf`` 0.6622 / 0.9111; ``session:n5`` 0.6582 / 0.9042, ``+prf`` 0.6610 / 0.9054.
Every variant loses somewhere beyond 0.005 against d30: every Rocchio one coding's R@5
(0.792 -> 0.778, one question of 72; ``+20`` 0.736 and MRR below vector alone); the session
ones win friends (``session:n2+prf`` R@5 0.546 -> 0.574, hit@10 0.643 -> 0.680, 15 won / 4
lost) and committee (R@10 0.444 -> 0.482) but lose coding's R@5 (-> 0.750), put
conversations' R@5 below vector alone (0.925 -> 0.887) and cost hotpot's and musique's R@5.

Latency (in process, p50 / p95 ms, the same box, not niced, load average 3.9-4.2): the
Rocchio source (``q'`` and one unfiltered flat search 50 deep) 0.16-0.72 / 0.19-4.35 by set
(≤ 6k memories); the stage over 40 candidates instead of 30 (cold) +0.4-3.1 ms p50; the scan
at 100k (flat, random unit vectors): 10.4 / 11.9 ms, which the source would add to every
search. The session source is one indexed ``SELECT``.

A floor (``VARIANT@floor``: no added candidate among the first ``FLOORS`` places, the floor
chosen per fold on the training sets' inner held-out orders) does not remove the losses
(same run, load average 2.5-4.5): ``session:n2+prf@floor`` 0.6609 / 0.9111 (friends hit@10
15 won / 4 lost) still puts conversations' R@5 below vector alone (0.925 -> 0.887) with
floor 10 chosen there, i.e. with no added candidate on the page: the loss is the refitted
weights reordering the head, not the additions. ``rocchio:k3:a0.85:+10+prf@floor`` 0.6623 /
0.9049 still loses coding's R@5 (0.792 -> 0.778).

So the head is kept as today's model orders it (``VARIANT@frozen``: per fold the d30 model of
the same training sets, frozen; only two columns fitted, ``added`` and ``added · prf_cos``,
0 on the head; the head's list-relative features are still computed over the wider list, as
the engine would). Same box, load average 2.5-4.1, each table one run:

    held out (R@5 / R@10 / MRR)  d30                  session:n2@frozen    n2@frozen@floor
    coding                       0.792/0.861/0.681    0.778/0.861/0.674 !  0.792/0.861/0.682
    committee                    0.352/0.444/0.775    0.383/0.490/0.772    0.358/0.490/0.773
    conversations                0.925/0.943/0.858    0.915/0.943/0.858 !  0.925/0.943/0.858
    friends                      0.546/0.605/0.485    0.567/0.637/0.491    0.543/0.599/0.489
    hotpot                       0.645/0.768/0.758    0.647/0.778/0.766    0.653/0.778/0.764
    meetings                     0.117/0.179/0.628    0.117/0.182/0.631    0.117/0.177/0.628
    memorybank                   0.883/0.972/0.591    0.893/0.972/0.591    0.893/0.972/0.591
    musique                      0.491/0.593/0.753    0.491/0.591/0.757    0.493/0.591/0.762
    balanced mean / hit@10 mean  0.6613 / 0.9034      0.6668 / 0.9123      0.6645 / 0.9086

(``!``: below the better single part: coding's MRR under vector alone's 0.676,
conversations' R@5 under its 0.925.) ``session:n2@frozen`` is the best lead measured here
(friends hit@10 0.643 -> 0.680, 15 won / 4 lost; committee 0.955 -> 0.977; hotpot 0.960 ->
0.980) but loses one question's R@5 on coding and on conversations; with the floor (3 / 5 /
10 chosen across folds: unstable) those go, and so do friends' wins (floor 10 chosen
there): friends' R@10 0.605 -> 0.599, beyond 0.005 by 0.001. ``session:n5@frozen`` 0.6648 /
0.9095 (coding R@5 0.764, conversations R@5 0.915 !); ``session:n5@frozen@floor`` 0.6643 /
0.9064; ``rocchio:k3:a0.85:+10@frozen`` 0.6613 / 0.9036 (nothing); ``fused+10@frozen``
(the deeper-list control) 0.6624 / 0.9067, coding R@5 0.778. Rocchio adds nothing frozen
or not; the first hit's session is the source worth a next step.

Next (not here): ``session:n2@frozen`` with a per-query gate chosen held out (the additions
only when the fused first leads clearly, or only when the query has no identifier), or the
first *k* hits' sessions, then ship it behind a setting (``search_rerank_session_source``)
if no set loses beyond 0.005; the engine's cost is one indexed ``SELECT`` and 2.4 more
candidates for the stage (about +0.1-0.6 ms p50 by the d30+10 figures above).

Usage: nice -n 5 python bench/relevance_prf_pool.py [--cache DIR] [--json]
       [--fit --variant rocchio:k5:a0.7:+10 --variant session:n2+prf@floor
       --variant session:n2@frozen --variant session:n2@frozen@floor ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import relevance_ltr as ltr  # noqa: E402
from bench import relevance_stage_lists as stage_lists  # noqa: E402
from bench.relevance_prf import rocchio, session_turns, stored_vectors  # noqa: E402
from bench.relevance_rerank import collect  # noqa: E402
from bench.relevance_sets import Loaded, available_sets, load, minilm  # noqa: E402
from workbench.recall import rerank_features, rerank_learned, rerank_maxsim, rerank_tokens  # noqa: E402
from workbench.recall.rerank_features import Candidates  # noqa: E402
from workbench.recall.rerank_tokens import TokenTable  # noqa: E402

HEAD = 30  # the fused candidates the shipped stage reads
ROCCHIO_K = (3, 5)
ROCCHIO_ALPHA = (0.7, 0.85)
ADD = (10, 20)
SESSION_WINDOW = (2, 5)
PRF_DEPTH = HEAD + max(ADD)  # q''s list is this deep: enough to find ``m`` new after the head
EXTRA = ("prf_cos", "added")
KEY = ltr.DEPTHS[0]


def rocchio_key(k: int, alpha: float, m: int) -> str:
    return f"rocchio:k{k}:a{alpha}:+{m}"


def sources() -> list[str]:
    """Every extra source measured, the controls first."""
    return [
        *(f"fused+{m}" for m in ADD),
        *(rocchio_key(k, a, m) for k, a, m in itertools.product(ROCCHIO_K, ROCCHIO_ALPHA, ADD)),
        *(f"session:n{n}" for n in SESSION_WINDOW),
    ]


def added(head: Sequence[int], found: Sequence[int], m: int | None = None) -> list[int]:
    """The first ``m`` (all: None) ids of ``found`` that ``head`` lacks, each once, in order."""
    have = set(head)
    out: list[int] = []
    for i in found:
        if i not in have:
            have.add(i)
            out.append(i)
    return out if m is None else out[:m]


def ceiling(pool: Sequence[int], gold: frozenset[int]) -> tuple[float, float]:
    """``(hit, recall)``: any gold memory in ``pool``; the share of the gold there."""
    held = len(gold & set(pool))
    return (1.0 if held else 0.0), held / len(gold)


def collected(loaded: Loaded, table: TokenTable) -> list[dict[str, Any]]:
    """Per question: set, class, gold, the fused/fts/vector orders, per source the ids it adds
    and the cosine of every candidate with its ``q'`` (``cos``, for ``prf_cos``), and the
    stage's ``(ids, rows)`` over the head plus every source's additions (``rows``: each
    variant's rows are those of its ids, read from ``wide``)."""
    import numpy as np

    vecs = stored_vectors(loaded)
    index = loaded.ranker.index
    by_text = {q.text: q for q in loaded.questions}
    fts_run, vec_run = ltr.single(loaded, "fts"), ltr.single(loaded, "vector")
    allowed_of: dict[str, list[int] | None] = {}
    out = []
    for c in collect(loaded):
        q = by_text[c.query]
        fused = list(c.candidates.fused)
        fused_ids = [i for i, _ in fused]
        head = fused_ids[:HEAD]
        qvec = np.asarray(loaded.ranker.embedder.embed([q.text])[0], dtype=np.float32)
        if q.project not in allowed_of:
            allowed_of[q.project] = (
                None
                if q.project == loaded.name or not q.project
                else [
                    int(r[0])
                    for r in loaded.conn.execute(
                        "SELECT id FROM observations WHERE project = ?", [q.project]
                    )
                ]
            )
        allowed = allowed_of[q.project]
        adds: dict[str, list[int]] = {}
        moved: dict[str, Any] = {}
        for m in ADD:
            adds[f"fused+{m}"] = fused_ids[HEAD : HEAD + m]
        for k, alpha in itertools.product(ROCCHIO_K, ROCCHIO_ALPHA):
            feedback = [vecs[i] for i in head[:k] if i in vecs]
            qp = rocchio(qvec, feedback, alpha) if feedback else qvec
            found = [i for i, _ in index.search(qp, PRF_DEPTH, allowed)]
            for m in ADD:
                adds[rocchio_key(k, alpha, m)] = added(head, found, m)
                moved[rocchio_key(k, alpha, m)] = qp
        for n in SESSION_WINDOW:
            near = session_turns(loaded.conn, head[0], n) if head else []
            adds[f"session:n{n}"] = added(head, near)
            # The session source's "moved query": Rocchio over the first hit's turns.
            feedback = [vecs[i] for i in near if i in vecs]
            moved[f"session:n{n}"] = rocchio(qvec, feedback, 0.85) if feedback else qvec
        every = added([], [*head, *itertools.chain.from_iterable(adds.values())])
        texts = rerank_features.load_texts(loaded.conn, every)
        joined = [
            f"{texts[i]['title']} {texts[i]['body']}".strip() if i in texts else "" for i in every
        ]
        raw = dict(zip(every, rerank_maxsim.scores(table, c.query, joined), strict=True))
        fused_of = dict(fused)
        cosines = dict(c.candidates.cosines)
        for i in every:
            if i not in cosines and i in vecs:
                cosines[i] = float(vecs[i] @ qvec)
        rows: dict[str, tuple[list[int], list[list[float]]]] = {}
        for label in ["d30", *adds]:
            ids = head + (adds.get(label, []))
            listed = [(i, fused_of.get(i, 0.0)) for i in ids]
            sub = Candidates(listed, c.candidates.text, c.candidates.vector, cosines)
            rows[label] = rerank_learned.compute(
                loaded.conn, c.query, sub, [raw[i] for i in ids], texts
            )
        cos = {
            label: {i: max(0.0, float(vecs[i] @ qp)) for i in every if i in vecs}
            for label, qp in moved.items()
        }
        out.append(
            {
                "set": loaded.name,
                "cls": q.cls,
                "gold": c.gold,
                "fused": fused_ids,
                "fts": fts_run(c.query),
                "vector": vec_run(c.query),
                "adds": adds,
                "cos": cos,
                "rows": rows,
            }
        )
    return out


def ceilings(raw: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, tuple[float, float, float]]]:
    """``{set: {pool: (hit, recall, mean candidates added)}}``; pool ``d30`` is the head."""
    out: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    for g in raw:
        head = g["fused"][:HEAD]
        per = out.setdefault(g["set"], {})
        per.setdefault("d30", []).append((*ceiling(head, g["gold"]), 0.0))
        for label, more in g["adds"].items():
            per.setdefault(label, []).append((*ceiling(head + more, g["gold"]), float(len(more))))
    return {
        s: {
            label: tuple(round(statistics.fmean(v[k] for v in vs), 4) for k in range(3))  # type: ignore[misc]
            for label, vs in per.items()
        }
        for s, per in out.items()
    }


PRF_OF = rocchio_key(5, 0.7, 10)  # ``d30+prf``'s q'


def items(raw: Sequence[Mapping[str, Any]], variant: str) -> list[ltr.Item]:
    """``relevance_ltr`` items whose stage rows are ``variant``'s: ``SOURCE`` (its candidates,
    today's columns), ``SOURCE+prf`` (its candidates and ``EXTRA``); ``d30`` / ``d30+prf``
    read the head only (``d30+prf``: ``EXTRA`` from the Rocchio point of ``--prf-of``)."""
    with_extra = variant.endswith("+prf")
    source = variant.removesuffix("+prf")
    out = []
    for g in raw:
        label = source if source in g["rows"] else "d30"
        ids, rows = g["rows"][label]
        if with_extra:
            of = source if source in g["cos"] else PRF_OF
            cos = g["cos"][of]
            new = set(g["adds"].get(source, ()))
            rows = [
                [*r, cos.get(i, 0.0), 1.0 if i in new else 0.0]
                for i, r in zip(ids, rows, strict=True)
            ]
        out.append(stage_lists.listed_item(g, ids, rows))
    return out


FLOORS: tuple[int | None, ...] = (None, 3, 5, 10)  # the first place an added one may take
FLOOR = "@floor"


def floored(order: Sequence[int], new: set[int], floor: int | None) -> list[int]:
    """``order`` with no id of ``new`` among its first ``floor`` places (None: as it is): those
    places go to the first ids of ``order`` not in ``new``, then the rest in order."""
    if floor is None or not new:
        return list(order)
    top = [i for i in order if i not in new][:floor]
    taken = set(top)
    return top + [i for i in order if i not in taken]


def best_floor(
    its: Sequence[ltr.Item], inner: Mapping[int, list[int]], new_of: Sequence[set[int]]
) -> int | None:
    """The floor of ``FLOORS`` with the least shortfall below the better single part over the
    ``inner`` held-out orders, ties to the best balanced mean, then to the first."""
    idx = list(inner)
    sub = [its[n] for n in idx]
    ranked = []
    for k, f in enumerate(FLOORS):
        tried = [floored(inner[n], new_of[n], f) for n in idx]
        ranked.append((round(ltr.shortfall(sub, tried), 4), -ltr.balanced(sub, tried), k))
    return FLOORS[min(ranked)[2]]


def held_out_floor(
    its: Sequence[ltr.Item], fit_sets: Sequence[str], new_of: Sequence[set[int]]
) -> tuple[list[list[int]], dict[str, Any]]:
    """``relevance_stage_lists.held_out``, and per fold the floor of ``FLOORS`` with the least
    shortfall below the better single part, ties to the best balanced mean, then to no
    floor: chosen on the training sets' inner held-out orders (each left out in turn, the
    fold's own grid point), never on the fold's set."""
    pairs = ltr.Pairs(its)
    orders: list[list[int]] = [[] for _ in its]
    chosen: dict[str, Any] = {}
    for left, train, test in stage_lists.folds(its, fit_sets):
        depth, l2, below, demotion, pin = ltr.choose(its, pairs, train, True)
        inner: dict[int, list[int]] = {}
        for s in sorted({its[n].set for n in train}):
            w = ltr.fit(its, pairs, [n for n in train if its[n].set != s], depth, l2, True, below)
            for n in train:
                if its[n].set == s:
                    inner[n] = ltr.reorder(its[n], depth, w, demotion, pin)
        floor = best_floor(its, inner, new_of)
        w = ltr.fit(its, pairs, train, depth, l2, True, below)
        chosen[left or "unseen"] = (l2, below, demotion, pin, floor)
        for n in test:
            orders[n] = floored(ltr.reorder(its[n], depth, w, demotion, pin), new_of[n], floor)
    return orders, chosen


FROZEN = "@frozen"


def fit_added(
    its: Sequence[ltr.Item], pairs: ltr.Pairs, train: Sequence[int], head: Sequence[float]
) -> tuple[float, ...]:
    """The ``EXTRA`` columns' weights with today's columns frozen at ``head`` (the d30 model of
    the same training sets): pairwise logistic loss as ``relevance_ltr.fit`` weighs it (every
    (set, class) alike), L2 towards 0 at ``relevance_ltr.L2S[0]``. The rows' extra columns
    are ``added`` and ``added · prf_cos`` (0 on the head), so the head keeps d30's order and
    only where the additions go is learned."""
    import numpy as np
    from scipy.optimize import minimize

    groups: dict[tuple[str, str], int] = {}
    for n in train:
        groups[(its[n].set, its[n].cls)] = groups.get((its[n].set, its[n].cls), 0) + 1
    per_item = np.zeros(len(its))
    for n in train:
        if pairs.count[KEY][n] > 0:
            per_item[n] = 1.0 / (groups[(its[n].set, its[n].cls)] * pairs.count[KEY][n])
    sw = per_item[pairs.owner[KEY]]
    keep = sw > 0
    x, sw = pairs.x[KEY][keep], sw[keep]
    sw = sw / sw.sum()
    width = len(head)
    fixed = x[:, :width] @ np.asarray(head, dtype=np.float64)
    xe = x[:, width:]
    l2 = ltr.L2S[0]

    def loss(b: Any) -> tuple[float, Any]:
        margin = fixed + xe @ b
        value = float(sw @ np.logaddexp(0.0, -margin)) + 0.5 * l2 * float(b @ b)
        grad = -(xe.T @ (sw / (1.0 + np.exp(np.clip(margin, -30, 30))))) + l2 * b
        return value, grad

    found = minimize(loss, np.zeros(xe.shape[1]), jac=True, method="L-BFGS-B")
    return (*head, *(float(v) for v in found.x))


def held_out_frozen(
    head_its: Sequence[ltr.Item],
    its: Sequence[ltr.Item],
    fit_sets: Sequence[str],
    new_of: Sequence[set[int]] | None = None,
) -> tuple[list[list[int]], dict[str, Any]]:
    """Per fold, d30's model as ``relevance_stage_lists.held_out`` fits it on ``head_its``
    (today's list), then ``fit_added`` on ``its`` (the head plus the additions) with it frozen;
    every order by models that never saw the fold's set. With ``new_of`` (each item's added
    ids), a floor of ``FLOORS`` too, chosen as ``held_out_floor`` chooses it (on the training
    sets' inner held-out orders, the fold's grid point)."""
    head_pairs, pairs = ltr.Pairs(head_its), ltr.Pairs(its)
    orders: list[list[int]] = [[] for _ in its]
    chosen: dict[str, Any] = {}
    for left, train, test in stage_lists.folds(its, fit_sets):
        depth, l2, below, demotion, pin = ltr.choose(head_its, head_pairs, train, True)
        floor = None
        if new_of is not None:
            inner: dict[int, list[int]] = {}
            for s in sorted({its[n].set for n in train}):
                rest = [n for n in train if its[n].set != s]
                head = ltr.fit(head_its, head_pairs, rest, depth, l2, True, below)
                w = fit_added(its, pairs, rest, head)
                for n in train:
                    if its[n].set == s:
                        inner[n] = ltr.reorder(its[n], depth, w, demotion, pin)
            floor = best_floor(its, inner, new_of)
        head = ltr.fit(head_its, head_pairs, train, depth, l2, True, below)
        w = fit_added(its, pairs, train, head)
        added_w = tuple(round(v, 3) for v in w[-2:])
        chosen[left or "unseen"] = (l2, below, demotion, pin, added_w, floor)
        for n in test:
            order = ltr.reorder(its[n], depth, w, demotion, pin)
            orders[n] = order if new_of is None else floored(order, new_of[n], floor)
    return orders, chosen


def frozen_items(raw: Sequence[Mapping[str, Any]], source: str) -> list[ltr.Item]:
    """``items(raw, source + "+prf")`` with the extra columns ``added`` and ``added ·
    prf_cos`` (0 on every head candidate)."""
    out = []
    for it in items(raw, source + "+prf"):
        ids, rows = it.rows[KEY]
        width = len(rows[0]) - len(EXTRA) if rows else 0
        wide = [[*r[:width], r[width + 1], r[width + 1] * r[width]] for r in rows]
        out.append(
            ltr.Item(it.set, it.cls, it.gold, it.fused, it.fts, it.vector, {}, {KEY: (ids, wide)})
        )
    return out


def scan_at(size: int, dim: int = 384, count: int = 200) -> tuple[float, float]:
    """p50 / p95 ms of one flat-index search (k ``PRF_DEPTH``) over ``size`` random unit
    vectors: what the extra source's vector search costs at that size."""
    import numpy as np

    from workbench.recall import vectors

    rng = np.random.default_rng(3)
    index = vectors.VectorIndex("bench", dim, "flat")
    for start in range(0, size, 20_000):
        block = rng.standard_normal((min(20_000, size - start), dim)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        ids = list(range(start + 1, start + 1 + len(block)))
        index.add(ids, [str(i) for i in ids], block)
    queries = rng.standard_normal((count, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    ts = []
    for qv in queries:
        started = time.perf_counter()
        index.search(qv, PRF_DEPTH)
        ts.append((time.perf_counter() - started) * 1000)
    ts.sort()
    return round(statistics.median(ts), 2), round(ts[int(len(ts) * 0.95)], 2)


def source_latency(loaded: Loaded, table: TokenTable) -> dict[str, tuple[float, float]]:
    """p50 / p95 ms, in process: Rocchio plus one vector search with ``q'`` (``PRF_OF``), and
    the stage (``rerank_learned.compute`` + ``ranked``, cold) over the head and over the head
    plus the additions, taking turns question by question."""
    import numpy as np

    vecs = stored_vectors(loaded)
    index = loaded.ranker.index
    model = rerank_learned.weights()
    times: dict[str, list[float]] = {"source": [], "stage d30": [], "stage d30+10": []}
    for c in collect(loaded):
        head = [i for i, _ in c.candidates.fused[:HEAD]]
        qvec = np.asarray(loaded.ranker.embedder.embed([c.query])[0], dtype=np.float32)
        started = time.perf_counter()
        qp = rocchio(qvec, [vecs[i] for i in head[:5] if i in vecs], 0.7) if head else qvec
        more = added(head, [i for i, _ in index.search(qp, PRF_DEPTH)], 10)
        times["source"].append((time.perf_counter() - started) * 1000)
        for label, ids in (("stage d30", head), ("stage d30+10", head + more)):
            fused_of = dict(c.candidates.fused)
            sub = Candidates(
                [(i, fused_of.get(i, 0.0)) for i in ids],
                c.candidates.text,
                c.candidates.vector,
                c.candidates.cosines,
            )
            rerank_features.clear_cache()
            rerank_maxsim.clear_cache()
            started = time.perf_counter()
            texts = rerank_maxsim.candidate_texts(loaded.conn, ids)
            got = rerank_learned.compute(
                loaded.conn, c.query, sub, rerank_maxsim.scores(table, c.query, texts)
            )
            rerank_learned.ranked(
                rerank_learned.Weights(model.values, len(ids), model.demotion, model.pin_gap),
                *got,
            )
            times[label].append((time.perf_counter() - started) * 1000)
    out = {}
    for label, ts in times.items():
        ts.sort()
        out[label] = (round(statistics.median(ts), 2), round(ts[int(len(ts) * 0.95)], 2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cache", type=Path, help="keep each set's collected rows in this dir")
    parser.add_argument("--fit", action="store_true", help="refit the stage per --variant")
    parser.add_argument(
        "--variant", action="append", default=[], help="e.g. rocchio:k5:a0.7:+10+prf"
    )
    parser.add_argument("--latency", action="store_true", help="time the source and the stage")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    reason = rerank_tokens.static_problem()
    if reason is not None:
        raise SystemExit(f"no static model for the learned stage's MaxSim: {reason}")
    table = rerank_tokens.load_static()
    model = minilm()
    raw: list[dict[str, Any]] = []
    sessions: dict[str, dict[int, str]] = {}
    doc: dict[str, Any] = {"latency": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in available_sets():
            got, ses, loaded = stage_lists.cached_rows(
                name, Path(tmp), model, args.cache, lambda one: collected(one, table)
            )
            if args.latency:
                loaded = loaded or load(name, Path(tmp), model)
                doc["latency"][name] = source_latency(loaded, table)
            if loaded is not None:
                loaded.store.close()
            raw += got
            sessions[name] = ses
    doc["ceiling"] = ceilings(raw)
    if args.latency:
        doc["latency"]["scan at 100k (random unit vectors, flat)"] = {"scan": scan_at(100_000)}
    if args.fit:
        base = items(raw, "d30")
        fit_sets, orders = stage_lists.shipped_fit(base, sessions)
        variants = ["d30", *[v for v in args.variant if v != "d30"]]
        doc["chosen"], doc["duel"] = {}, {}
        for variant in variants:
            started = time.perf_counter()
            its = items(raw, variant.removesuffix(FLOOR).removesuffix(FROZEN))
            if FROZEN in variant:
                source = variant.removesuffix(FLOOR).removesuffix(FROZEN)
                floors = [set(g["adds"].get(source, ())) for g in raw]
                frozen = frozen_items(raw, source)
                got = held_out_frozen(
                    base, frozen, fit_sets, floors if variant.endswith(FLOOR) else None
                )
            elif variant.endswith(FLOOR):
                source = variant.removesuffix(FLOOR).removesuffix("+prf")
                new_of = [set(g["adds"].get(source, ())) for g in raw]
                got = held_out_floor(its, fit_sets, new_of)
            else:
                got = stage_lists.held_out(its, fit_sets)
            orders[variant], doc["chosen"][variant] = got
            took = time.perf_counter() - started
            print(f"{variant}: fitted in {took:.0f} s", file=sys.stderr, flush=True)
        for variant in variants:
            doc["duel"][variant] = stage_lists.duel(base, orders[variant], orders["d30"])
        doc["tables"] = ltr.table_rows(base, orders, sessions)
    if args.json:
        print(json.dumps(doc, indent=2, default=list))
        return
    print_ceiling(doc["ceiling"])
    for name, ms in doc["latency"].items():
        print(f"latency {name}: " + "  ".join(f"{k} {v[0]}/{v[1]} ms" for k, v in ms.items()))
    if args.fit:
        stage_lists.print_tables(doc, variants)


def print_ceiling(table: Mapping[str, Mapping[str, tuple[float, float, float]]]) -> None:
    """Per pool, each set's hit / recall and their gain over ``d30``; the mean over sets."""
    sets = list(table)
    labels = list(next(iter(table.values())))
    print("pool ceiling: share of questions with a gold memory among the stage's candidates")
    print("(hit; recall = mean share of gold there; +n = mean candidates added)")
    print(f"{'pool':<24}" + "".join(f"{s[:13]:>15}" for s in sets) + f"{'mean':>15}")
    for label in labels:
        cells, gains = [], []
        for s in sets:
            hit, rec, more = table[s][label]
            gain = hit - table[s]["d30"][0]
            gains.append(gain)
            cells.append(f"{hit:.3f}{'' if label == 'd30' else f'{gain:+.3f}':>7}".rjust(15))
        mean_hit = statistics.fmean(table[s][label][0] for s in sets)
        more = statistics.fmean(table[s][label][2] for s in sets)
        print(f"{label:<24}" + "".join(cells) + f"{mean_hit:>9.3f} +{more:4.1f}")
    print("recall (share of gold among the candidates):")
    for label in labels:
        cells = [f"{table[s][label][1]:.3f}".rjust(15) for s in sets]
        mean_rec = statistics.fmean(table[s][label][1] for s in sets)
        print(f"{label:<24}" + "".join(cells) + f"{mean_rec:>15.3f}")


if __name__ == "__main__":
    main()
