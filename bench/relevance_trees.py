"""Would boosted trees over the learned stage's features rank better than its linear model?

Why (issue 21): the learned second stage is linear over 23 features
(``workbench/recall/rerank_learned.py``), and every feature added since stop 40 (session
coverage, a neighbouring turn's words, a time named in a "when" question:
``bench/relevance_stage_lists.py``) moved the held-out sets by a question or two either way.
That leaves the other possibility: the evidence is in the features, but a linear score cannot
combine it (a MaxSim that matters only when full text found nothing, say). Trees can.

What it fits, per fold, on the other sets' questions only:

1. the linear model as shipped (``relevance_ltr.fit`` with the shipped file's penalty and
   weight below the page), then
2. ``T`` regression trees (scikit-learn's ``DecisionTreeRegressor``, depth ``d``, at least
   ``leaf`` candidates a leaf) boosted on top of the linear score: each a Newton step on the
   same pairwise logistic loss, with the same question weights (every (set, class) group
   alike, a pair below the fused top 10 weighted as the shipped file says), shrunk by ``lr``.

Each held-out question is then ordered as the service orders it: the score, the pin, the
demotion cap and the session keep rule of the shipped file (``rerank_learned``: ``pinned``,
``capped``, ``kept``). ``T = 0`` is today's stage, refitted the same way: the control. Printed
per set: R@5, R@10, MRR, hit@10 and session hit@10 (``relevance_readings``) and the
class-balanced mean, with each one's difference from the control. Leave one set out over the
eight sets; the held-out benchmark is never read.

Result (stop 47, 984 questions, 8 sets, a quiet 2-core box): **not shipped**. The mean of the
sets' balanced scores moves 0.6631 (control) to 0.6628 / 0.6642 / 0.6642 / 0.6617 for
(T, d) = (30, 2) / (30, 3) / (100, 2) / (100, 3) at lr 0.1, leaf 50, and every configuration
loses somewhere by more than the issue's 0.005: (30, 3) friends R@5 −0.020 and musique MRR
−0.023; (100, 2) friends R@5 −0.017 and musique MRR −0.028; (30, 2) conversations MRR −0.013;
(100, 3) memorybank −0.012 balanced and committee hit@10 −0.015. What the trees win (committee
R@10 +0.02, memorybank R@5 +0.03, hotpot R@10 +0.01) is a few questions a set, and a different
few per configuration. So the linear model is not what holds the stage back: the features
are. The next lever is new evidence per candidate, not a richer model of these numbers.

Usage: python bench/relevance_trees.py [--cache ITEMS.pkl] [--trees T:d:lr:leaf ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import relevance_ltr as ltr  # noqa: E402
from bench import relevance_readings  # noqa: E402
from workbench.recall import rerank_learned  # noqa: E402

DEPTH = 30  # the shipped stage's depth (``rerank_learned.json``)
DEFAULT_TREES = ("30:2:0.1:50", "30:3:0.1:50", "100:2:0.1:50", "100:3:0.1:50")
READINGS = ("r5", "r10", "mrr", "hit10", "sess_hit10")


@dataclass(frozen=True)
class Boost:
    """How many trees, how deep, their shrinkage and the fewest candidates a leaf holds."""

    trees: int
    depth: int
    rate: float
    leaf: int

    @classmethod
    def parse(cls, text: str) -> Boost:
        trees, depth, rate, leaf = text.split(":")
        return cls(int(trees), int(depth), float(rate), int(leaf))

    def label(self) -> str:
        if not self.trees:
            return "linear (control)"
        return f"+{self.trees} trees d{self.depth} lr{self.rate:g} leaf{self.leaf}"


def shipped() -> dict[str, Any]:
    """The shipped file's fit and page settings (the control's and every variant's)."""
    doc: dict[str, Any] = json.loads(rerank_learned.WEIGHTS_FILE.read_text(encoding="utf-8"))
    return doc


def boost(
    pairs: ltr.Pairs,
    keep: Any,
    weights: Any,
    linear: Sequence[float],
    how: Boost,
) -> list[Any]:
    """Trees boosted on the pairwise logistic loss over the pairs ``keep`` selects (weighted
    ``weights``: ``relevance_ltr.pair_weights``, as the linear fit weighs them), starting from
    the linear score."""
    import numpy as np
    from sklearn.tree import DecisionTreeRegressor

    x_all = pairs.rows[DEPTH]
    score = x_all @ np.asarray(linear, dtype=np.float64)
    p, q = pairs.gold_at[DEPTH][keep], pairs.other_at[DEPTH][keep]
    trees = []
    for _ in range(how.trees):
        wrong = 1.0 / (1.0 + np.exp(np.clip(score[p] - score[q], -30, 30)))
        grad = np.zeros(len(score))
        hess = np.zeros(len(score))
        np.add.at(grad, p, -weights * wrong)
        np.add.at(grad, q, weights * wrong)
        curve = weights * wrong * (1.0 - wrong)
        np.add.at(hess, p, curve)
        np.add.at(hess, q, curve)
        used = hess > 0
        tree = DecisionTreeRegressor(max_depth=how.depth, min_samples_leaf=how.leaf, random_state=0)
        tree.fit(x_all[used], -grad[used] / hess[used], sample_weight=hess[used])
        score = score + how.rate * tree.predict(x_all)
        trees.append(tree)
    return trees


def ordered(
    it: ltr.Item,
    linear: Sequence[float],
    trees: Sequence[Any],
    rate: float,
    settings: Mapping[str, Any],
    session_of: Mapping[int, str],
) -> list[int]:
    """``it``'s candidates as the service orders them (``rerank_learned.ranked``: the pin, the
    demotion cap, the session keep rule) under the linear score plus the trees', then the
    rest of the fused list. The trees' score goes in as one more column, weighted 1."""
    import numpy as np

    ids, rows = it.rows[DEPTH]
    x = np.asarray(rows, dtype=np.float64)
    extra = sum((rate * tree.predict(x) for tree in trees), np.zeros(len(ids)))
    model = rerank_learned.Weights(
        (*linear, 1.0),
        DEPTH,
        settings.get("demotion"),
        settings.get("pin_gap"),
        None,
        settings.get("session_keep"),
    )
    sessions = {i: session_of[i] for i in ids if i in session_of}
    head = rerank_learned.ranked(
        model, ids, [[*row, float(e)] for row, e in zip(rows, extra, strict=True)], sessions
    )
    taken = set(head)
    return head + [i for i in it.fused if i not in taken]


def figures(
    items: Sequence[ltr.Item],
    orders: Mapping[int, Sequence[int]],
    sessions: Mapping[str, Mapping[int, str]],
) -> dict[str, dict[str, float]]:
    """Per set: each of ``READINGS`` and the class-balanced mean (``relevance_ltr.balanced``)."""
    out: dict[str, dict[str, float]] = {}
    for name in sorted({it.set for it in items}):
        idx = [n for n, it in enumerate(items) if it.set == name]
        read = [
            relevance_readings.read(list(orders[n])[:50], items[n].gold, sessions.get(name))
            for n in idx
        ]
        means = relevance_readings.mean(read)
        row = {k: float(means[k]) if means[k] is not None else float("nan") for k in READINGS}
        row["balanced"] = ltr.balanced([items[n] for n in idx], [orders[n] for n in idx])
        out[name] = row
    return out


def held_out(
    items: Sequence[ltr.Item],
    pairs: ltr.Pairs,
    how: Boost,
    settings: Mapping[str, Any],
    sessions: Mapping[str, Mapping[int, str]],
) -> dict[int, list[int]]:
    """Every question ordered by a model fitted leaving its set out."""
    orders: dict[int, list[int]] = {}
    below = float(settings.get("below_page", 1.0))
    for name in sorted({it.set for it in items}):
        train = [n for n, it in enumerate(items) if it.set != name]
        linear = ltr.fit(items, pairs, train, DEPTH, float(settings["l2"]), True, below)
        keep, weights = ltr.pair_weights(items, pairs, train, DEPTH, below)
        trees = boost(pairs, keep, weights, linear, how) if how.trees else []
        for n, it in enumerate(items):
            if it.set == name:
                orders[n] = ordered(it, linear, trees, how.rate, settings, sessions.get(name, {}))
    return orders


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cache", type=Path, help="relevance_ltr's pickle of the candidates")
    parser.add_argument(
        "--trees", nargs="*", default=list(DEFAULT_TREES), help="T:depth:rate:leaf, each a row"
    )
    args = parser.parse_args()
    settings = shipped()
    variants = [Boost(0, 0, 0.0, 0), *(Boost.parse(t) for t in args.trees)]
    with ltr.loaded_items(args.cache) as (every, items):
        sessions = ltr.sessions_of(every)
        pairs = ltr.Pairs(items)
        control: dict[str, dict[str, float]] = {}
        for how in variants:
            found = figures(items, held_out(items, pairs, how, settings, sessions), sessions)
            control = control or found
            mean = statistics.fmean(row["balanced"] for row in found.values())
            print(f"{how.label()}: mean balanced {mean:.4f}", flush=True)
            for name, row in found.items():
                cells = "  ".join(
                    f"{k} {v:.3f} ({v - control[name][k]:+.3f})" for k, v in row.items()
                )
                print(f"  {name:<14} {cells}", flush=True)


if __name__ == "__main__":
    main()
