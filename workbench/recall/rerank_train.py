"""Fit the reranker's weights to one user's history: generated questions, pairwise logistic loss.

Questions (deterministic for a seed, never the relevance sets' gold questions):

- **requests**: each session summary's ``request`` with the observations of that prompt as its
  answer (``recall.evaluate.questions``, what the evaluate notebook asks);
- **observations**: each observation's content words, about half of them kept (seeded) from
  one sentence of its narrative or facts, or from its title when it has no body, as a
  keyword question whose answer is that observation.

Each question runs through the real ``SearchEngine`` (hybrid, no rerank) and its fused top-N
becomes a group: answers are positives, the other candidates negatives. The model is linear:
``w`` minimises the logistic loss of ``w · (f_pos − f_neg)`` over every (answer, candidate)
pair of a group, with an L2 pull towards the built-in default (its strength chosen on an inner
split of the training questions), by full-batch gradient descent (numpy; fixed steps,
so the same history gives the same weights). A fifth of the questions (seeded) is held out
and reported: R@5, R@10 and MRR of the fused order vs the reranked order.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.errors import InvalidInput
from workbench.recall import rerank, rerank_features
from workbench.recall.rerank_features import FEATURES, Candidates
from workbench.recall.search import SearchEngine

MIN_GROUPS = 10
STEPS = 400
LEARNING_RATE = 0.5
L2S = (0.001, 0.01, 0.1, 1.0)  # the penalty is chosen among these on held-out questions
HOLDOUT_EVERY = 5
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class TrainQuestion:
    text: str
    gold: frozenset[int]
    source: str  # request | observation


def generate(conn: sqlite3.Connection, *, limit: int = 400, seed: int = 0) -> list[TrainQuestion]:
    """Questions from summaries' requests and from observations, seeded sample of ``limit``."""
    from workbench.recall import evaluate

    found = [
        TrainQuestion(q.text, q.gold, "request")
        for q in evaluate.questions(conn, sources=("request",))
    ]
    rows = conn.execute(
        "SELECT id, title, narrative, facts FROM observations ORDER BY id"
    ).fetchall()
    for row in rows:
        rng = random.Random(f"{seed}:{row[0]}")
        body = f"{row[2] or ''}\n{rerank_features.flat(row[3])}"
        sentences = [s for s in _SENTENCE.split(body) if len(s.split()) >= 4]
        source = rng.choice(sentences) if sentences else str(row[1] or "")
        content = [w for w in source.split() if w.lower().strip(".,;:!?") not in _STOP_WORDS]
        if len(content) < 3:
            continue
        keep = max(3, len(content) // 2)
        chosen = sorted(rng.sample(range(len(content)), keep))
        found.append(
            TrainQuestion(" ".join(content[n] for n in chosen), frozenset({row[0]}), "observation")
        )
    texts: dict[str, int] = {}
    for q in found:
        texts[q.text] = texts.get(q.text, 0) + 1
    unique = [q for q in found if texts[q.text] == 1]  # a text asked twice has no one answer
    if len(unique) > limit:
        keep_at = sorted(random.Random(seed).sample(range(len(unique)), limit))
        unique = [unique[n] for n in keep_at]
    return unique


_STOP_WORDS = frozenset("a an and the of to in on for with is was it this that".split())


class CollectingEngine(SearchEngine):
    """The real engine, keeping the fused candidates instead of reranking them."""

    last: Candidates | None = None

    def _rerank(
        self, query: str, candidates: Candidates, first_only: bool = False
    ) -> tuple[list[tuple[int, float]], str | None]:
        """The fused candidates, kept; the stage is skipped, but a missing model is still
        said in ``degraded`` as the real engine says it."""
        self.last = candidates
        return candidates.fused, rerank.problem(self.settings)


@dataclass
class Group:
    question: TrainQuestion
    ids: list[int]
    rows: list[list[float]]


def collect(
    conn: sqlite3.Connection,
    ranker: Any,
    questions: Sequence[TrainQuestion],
    settings: Any = None,
    depth: int = rerank.DEFAULT_DEPTH,
) -> list[Group]:
    """One feature group per question whose fused top ``depth`` holds an answer."""
    engine = CollectingEngine(conn, settings, ranker)
    reason = engine.vector_unavailable()
    if reason is not None:
        raise InvalidInput(
            f"training the reranker needs semantic search, which is unavailable: {reason}. "
            "Check `workbench doctor` (the embedder setting and its model)"
        )
    groups: list[Group] = []
    for q in questions:
        engine.last = None
        engine.search(q.text, types="observations", mode="hybrid", limit=1)
        if engine.last is None:
            continue
        head = Candidates(
            engine.last.fused[:depth], engine.last.text, engine.last.vector, engine.last.cosines
        )
        if not q.gold & {i for i, _ in head.fused}:
            continue
        ids, rows = rerank_features.compute(conn, q.text, head)
        groups.append(Group(q, ids, rows))
    return groups


def fit(groups: Sequence[Group], l2: float = L2S[1], steps: int = STEPS) -> rerank.Model:
    """Pairwise logistic regression (no bias: only differences within a group matter).

    Starts from, and is pulled towards, the built-in default (L2 on ``w − w_default``): with
    little evidence the model stays what search does untrained.
    """
    import numpy as np

    diffs = []
    for g in groups:
        rows = np.asarray(g.rows, dtype=np.float64)
        pos = [n for n, i in enumerate(g.ids) if i in g.question.gold]
        neg = [n for n, i in enumerate(g.ids) if i not in g.question.gold]
        for p in pos:
            if neg:
                diffs.append(rows[p] - rows[neg])
    if not diffs:
        raise InvalidInput("no answer ranked among the candidates: nothing to learn from")
    x = np.concatenate(diffs)
    prior = np.asarray(rerank.Model.default().weights, dtype=np.float64)
    w = prior.copy()
    for _ in range(steps):
        margin = np.clip(x @ w, -30, 30)
        grad = -(x.T @ (1.0 / (1.0 + np.exp(margin)))) / len(x) + l2 * (w - prior)
        w -= LEARNING_RATE * grad
    return rerank.Model(tuple(float(v) for v in w), "trained")


def metrics(groups: Sequence[Group], model: rerank.Model | None) -> dict[str, float]:
    """Mean R@5, R@10, MRR of the groups in fused order (``model`` None) or reranked."""
    if not groups:
        return {"n": 0, "recall@5": 0.0, "recall@10": 0.0, "mrr": 0.0}
    r5 = r10 = mrr = 0.0
    for g in groups:
        order = g.ids if model is None else rerank.ranked(model, g.ids, g.rows)
        gold = g.question.gold
        r5 += len(gold & set(order[:5])) / len(gold)
        r10 += len(gold & set(order[:10])) / len(gold)
        first = next((n for n, i in enumerate(order, start=1) if i in gold), None)
        mrr += 1 / first if first else 0.0
    n = len(groups)
    return {"n": n, "recall@5": r5 / n, "recall@10": r10 / n, "mrr": mrr / n}


def split(groups: Sequence[Group], seed: int = 0) -> tuple[list[Group], list[Group]]:
    """(train, holdout): every ``HOLDOUT_EVERY``-th group of a seeded shuffle is held out."""
    order = list(range(len(groups)))
    random.Random(seed).shuffle(order)
    held = {n for k, n in enumerate(order) if k % HOLDOUT_EVERY == 0}
    return (
        [g for n, g in enumerate(groups) if n not in held],
        [g for n, g in enumerate(groups) if n in held],
    )


def train(
    conn: sqlite3.Connection,
    ranker: Any,
    settings: Any = None,
    *,
    limit: int = 400,
    seed: int = 0,
) -> tuple[rerank.Model, dict[str, Any]]:
    """Generate, collect, fit on four fifths, report on the fifth; then refit on all groups."""
    questions = generate(conn, limit=limit, seed=seed)
    groups = collect(conn, ranker, questions, settings, depth=rerank.depth(settings))
    if len(groups) < MIN_GROUPS:
        raise InvalidInput(
            f"only {len(groups)} usable questions in this history (need {MIN_GROUPS}); keep "
            "working with memory on and train later, the built-in default is used until then"
        )
    training, holdout = split(groups, seed)
    # The penalty: chosen on an inner split of the training questions, never the holdout.
    inner, check = split(training, seed + 1)
    l2 = max(L2S, key=lambda p: (metrics(check, fit(inner, p))["mrr"], p))
    trial = fit(training, l2)
    final = fit(groups, l2)
    report = {
        "l2": l2,
        "questions": len(questions),
        "groups": len(groups),
        "sources": {
            s: sum(g.question.source == s for g in groups) for s in ("request", "observation")
        },
        "train": {"fused": metrics(training, None), "reranked": metrics(training, trial)},
        "holdout": {"fused": metrics(holdout, None), "reranked": metrics(holdout, trial)},
        "weights": dict(zip(FEATURES, final.weights, strict=True)),
    }
    return final, report
