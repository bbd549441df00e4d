"""Choose the fusion parameters and the prompt-injection floor by cross-validation. Prints them.

Never tuned on the set it is reported on: parameters are chosen on one relevance set and
scored on the other (leave one set out, both ways), and, within the pooled questions, by
5-fold cross-validation by question (chosen on four folds, scored on the fifth).

Fusion (``workbench/recall/fusion.py``): a grid over the full-text weight (the vector weight is
1 − it; only the ratio matters) and the BM25 coverage gate. The objective is class-balanced:
the mean over question classes of (R@5 + R@10 + MRR) / 3, so a small class (multi-hop) counts
as much as a large one. Each question's BM25 list, vector list and coverage are computed once
through the same functions ``SearchEngine`` calls (100 deep, as for a 50-hit search), then
fused for every grid point.

The defaults in ``workbench/settings.py`` are the most frequent per-fold choice; the figures
that show what they are worth are the held-out ones printed here.

Floor (``prompt_injection_min_similarity``): the prompt hook injects the top
``prompt_injection_count`` (3) vector hits. The floor chosen on a set is the highest cosine
that keeps 95% of the relevant hits among those; on the other set it reports the share of
relevant hits kept and of irrelevant ones dropped.

Reranker (``workbench/recall/rerank.py``): 5-fold by question over both sets pooled, the
weights fitted (``rerank_train.fit``, its penalty chosen on an inner split of the training
folds) on the gold questions of four folds and scored on the fifth, against the fused order
of the same questions. This is the reranker trained on questions like the ones it is scored
on (but never on the same ones); ``bench/relevance.py`` shows it trained on generated ones.

Usage: python bench/relevance_cv.py [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.relevance import metrics  # noqa: E402
from bench.relevance_sets import SETS, Loaded, load, minilm  # noqa: E402
from workbench.recall import fts, fusion  # noqa: E402
from workbench.recall.filters import SearchFilters  # noqa: E402
from workbench.recall.fusion import FusionParams  # noqa: E402

POOL = 100  # what each ranker contributes to a 50-hit hybrid search
WEIGHTS = [round(0.1 * n, 1) for n in range(0, 11)]
GATES = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
INJECTED = 3
KEEP = 0.95


@dataclass
class Case:
    set: str
    cls: str
    relevant: tuple[int, ...]
    text: list[tuple[int, float]]
    vector: list[tuple[int, float]]
    cover: dict[int, float]
    cosines: dict[int, float]  # of full-text hits beyond the vector list, as SearchEngine asks


def cases(loaded: Loaded) -> list[Case]:
    out = []
    for q in loaded.questions:
        text = fts.rank(loaded.conn, "observations", q.text, SearchFilters(), limit=POOL)
        vector = loaded.ranker.rank(q.text, POOL, None)
        cover = fusion.coverage(loaded.conn, "observations", q.text, [i for i, _ in text])
        beyond = [i for i, _ in text if i not in {j for j, _ in vector}]
        cosines = dict(loaded.ranker.rank(q.text, len(beyond), beyond)) if beyond else {}
        out.append(Case(loaded.name, q.cls, q.relevant, text, vector, cover, cosines))
    return out


def scores(
    ranked_by: dict[str, list[list[int]]], cs: Sequence[Case]
) -> dict[str, dict[str, float]]:
    """Per class (and "macro"): mean R@5, R@10, MRR for each ranker's rankings of ``cs``."""
    out: dict[str, dict[str, float]] = {}
    for name, rankings in ranked_by.items():
        per: dict[str, list[tuple[float, float, float]]] = {}
        for case, ranked in zip(cs, rankings, strict=True):
            per.setdefault(case.cls, []).append(metrics(ranked[:50], case.relevant))
        row = {}
        for cls, ms in per.items():
            for k, label in enumerate(("R@5", "R@10", "MRR")):
                row[f"{cls} {label}"] = sum(m[k] for m in ms) / len(ms)
        row["macro"] = sum(
            (row[f"{c} R@5"] + row[f"{c} R@10"] + row[f"{c} MRR"]) / 3 for c in per
        ) / len(per)
        out[name] = row
    return out


def fused(cs: Sequence[Case], params: FusionParams) -> list[list[int]]:
    return [
        [i for i, _ in fusion.fuse(c.text, c.vector, c.cover, params, cosines=c.cosines)]
        for c in cs
    ]


def grid() -> list[FusionParams]:
    return [
        FusionParams("weighted", w, round(1 - w, 1), g, norm)
        for w, g, norm in itertools.product(WEIGHTS, GATES, ("cosine", "minmax"))
        if w < 1.0  # w=1 is BM25 alone
    ]


def choose(cs: Sequence[Case]) -> tuple[FusionParams, float]:
    """The grid point with the best class-balanced score on ``cs`` (ties: the first).

    Points that lose to the best single ranker on any class and metric (by more than 0.005)
    are only taken when no point avoids that: "never loses to its parts" comes first.
    """
    parts = scores(singles(cs), cs)
    floor = {m: max(parts["bm25"][m], parts["vector"][m]) for m in parts["bm25"]}
    best: tuple[bool, float, FusionParams] | None = None
    for params in grid():
        row = scores({"h": fused(cs, params)}, cs)["h"]
        safe = all(row[m] >= floor[m] - 0.005 for m in row if m != "macro")
        key = (safe, row["macro"])
        if best is None or key > (best[0], best[1] + 1e-12):
            best = (safe, row["macro"], params)
    assert best is not None
    return best[2], best[1]


def singles(cs: Sequence[Case]) -> dict[str, list[list[int]]]:
    return {
        "bm25": [[i for i, _ in c.text] for c in cs],
        "vector": [[i for i, _ in c.vector] for c in cs],
        "hybrid rrf (before)": fused(cs, FusionParams(method="rrf")),
    }


def floor_for(cs: Sequence[Case]) -> float:
    """The highest cosine keeping KEEP of the relevant hits among the top INJECTED."""
    relevant = sorted(s for c in cs for i, s in c.vector[:INJECTED] if i in set(c.relevant))
    if not relevant:
        return 0.0
    return round(relevant[int(len(relevant) * (1 - KEEP))] - 0.005, 2)


def floor_effect(cs: Sequence[Case], floor: float) -> dict[str, float]:
    kept_rel = total_rel = kept_irr = total_irr = 0
    for c in cs:
        for i, s in c.vector[:INJECTED]:
            if i in set(c.relevant):
                total_rel += 1
                kept_rel += s >= floor
            else:
                total_irr += 1
                kept_irr += s >= floor
    return {
        "relevant_kept": kept_rel / max(total_rel, 1),
        "irrelevant_dropped": 1 - kept_irr / max(total_irr, 1),
    }


def describe(p: FusionParams) -> str:
    return (
        f"fts_weight={p.fts_weight} vector_weight={p.vector_weight} fts_gate={p.fts_gate}"
        f" vector_norm={p.vector_norm}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    model = minilm()
    by_set: dict[str, list[Case]] = {}
    groups: dict[str, list[Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in SETS:
            loaded = load(name, Path(tmp), model)
            by_set[name] = cases(loaded)
            groups[name] = rerank_groups(loaded)
            loaded.store.close()
    model.save()
    doc: dict[str, Any] = {"leave_one_set_out": {}, "kfold": {}, "floor": {}}

    # -- leave one set out ----------------------------------------------------------------
    for train, test in itertools.permutations(SETS, 2):
        params, train_score = choose(by_set[train])
        held = by_set[test]
        table = scores(
            {**singles(held), "hybrid (chosen on " + train + ")": fused(held, params)}, held
        )
        doc["leave_one_set_out"][f"{train}->{test}"] = {
            "params": describe(params),
            "train_macro": round(train_score, 4),
            "held_out": {k: {m: round(v, 4) for m, v in row.items()} for k, row in table.items()},
        }

    # -- 5-fold by question over both sets ------------------------------------------------
    pooled = [c for name in SETS for c in by_set[name]]
    order = list(range(len(pooled)))
    random.Random(5).shuffle(order)
    folds = [order[k::5] for k in range(5)]
    held_rankings: dict[int, list[int]] = {}
    chosen = []
    for fold in folds:
        train = [pooled[i] for i in order if i not in set(fold)]
        params, _ = choose(train)
        chosen.append(describe(params))
        for i, ranked in zip(fold, fused([pooled[i] for i in fold], params), strict=True):
            held_rankings[i] = ranked
    rankings = [held_rankings[i] for i in range(len(pooled))]
    table = scores({**singles(pooled), "hybrid (5-fold held out)": rankings}, pooled)
    consensus = max(dict.fromkeys(chosen), key=chosen.count)
    doc["chosen"] = consensus  # the defaults in workbench/settings.py
    doc["kfold"] = {
        "chosen_per_fold": chosen,
        "held_out": {k: {m: round(v, 4) for m, v in row.items()} for k, row in table.items()},
    }

    pooled_groups = [g for name in SETS for g in groups[name]]
    doc["rerank_kfold"] = rerank_kfold(pooled_groups)
    # The coding set stores its 50 targets first and 450 distractors after, and their types
    # differ: recency and type priors can learn the set's construction. Without them:
    doc["rerank_kfold_no_priors"] = rerank_kfold(without_priors(pooled_groups))

    # -- prompt-injection floor -----------------------------------------------------------
    for train, test in itertools.permutations(SETS, 2):
        floor = floor_for(by_set[train])
        doc["floor"][f"{train}->{test}"] = {"floor": floor, **floor_effect(by_set[test], floor)}
    doc["floor"]["default"] = min(v["floor"] for v in doc["floor"].values())

    if args.json:
        print(json.dumps(doc, indent=2))
        return
    for key, body in doc["leave_one_set_out"].items():
        print(
            f"\n== chosen on {key.split('->')[0]}: {body['params']} "
            f"(train macro {body['train_macro']}); held out on {key.split('->')[1]}:"
        )
        print_rows(body["held_out"])
    print("\n== 5-fold by question (both sets pooled); chosen per fold:")
    for line in doc["kfold"]["chosen_per_fold"]:
        print(f"   {line}")
    print_rows(doc["kfold"]["held_out"])
    print(f"\n== chosen (the most frequent per-fold choice; the settings' defaults): {consensus}")
    for key, what in (
        ("rerank_kfold", "all features"),
        ("rerank_kfold_no_priors", "without recency and type priors (set artefacts)"),
    ):
        print(f"\n== reranker, 5-fold by question, {what}; questions answered in the top 50:")
        for cls, row in doc[key].items():
            print(
                f"   {cls:<12} n={row['n']:>3}  fused R@5 {row['fused'][0]:.2f} R@10 "
                f"{row['fused'][1]:.2f} MRR {row['fused'][2]:.3f}  ->  reranked R@5 "
                f"{row['reranked'][0]:.2f} R@10 {row['reranked'][1]:.2f} "
                f"MRR {row['reranked'][2]:.3f}"
            )
    print("\n== prompt-injection floor (top 3 vector hits):")
    for key, body in doc["floor"].items():
        if key == "default":
            continue
        print(
            f"   chosen on {key.split('->')[0]}: {body['floor']:.2f} → on {key.split('->')[1]}: "
            f"relevant kept {body['relevant_kept']:.2f}, irrelevant dropped "
            f"{body['irrelevant_dropped']:.2f}"
        )
    print(f"   default (the lower): {doc['floor']['default']:.2f}")


def rerank_groups(loaded: Loaded) -> list[Any]:
    """One feature group per gold question (``cls`` as its source), hybrid with the defaults."""
    from workbench.recall import rerank_train

    qs = [
        rerank_train.TrainQuestion(q.text, frozenset(q.relevant), q.cls) for q in loaded.questions
    ]
    return rerank_train.collect(loaded.conn, loaded.ranker, qs)


def without_priors(groups: Sequence[Any]) -> list[Any]:
    """The groups with the recency and type features zeroed (so they cannot be learned)."""
    from workbench.recall.rerank_features import FEATURES
    from workbench.recall.rerank_train import Group

    drop = {k for k, f in enumerate(FEATURES) if f == "recency" or f.startswith("type_")}
    return [
        Group(
            g.question, g.ids, [[0.0 if k in drop else x for k, x in enumerate(r)] for r in g.rows]
        )
        for g in groups
    ]


def rerank_kfold(pooled: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Per class: (R@5, R@10, MRR) fused vs reranked, each question scored by a model that
    never saw it (5 folds; the penalty chosen on an inner split of the four training folds)."""
    from workbench.recall import rerank_train

    order = list(range(len(pooled)))
    random.Random(5).shuffle(order)
    folds = [order[k::5] for k in range(5)]
    per: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    for fold in folds:
        held = set(fold)
        train = [pooled[i] for i in order if i not in held]
        inner, check = rerank_train.split(train, 1)
        l2 = max(
            rerank_train.L2S,
            key=lambda p: (rerank_train.metrics(check, rerank_train.fit(inner, p))["mrr"], p),
        )
        model = rerank_train.fit(train, l2)
        for i in fold:
            g = pooled[i]
            for label, m in (("fused", None), ("reranked", model)):
                got = rerank_train.metrics([g], m)
                row = (got["recall@5"], got["recall@10"], got["mrr"])
                for cls in (g.question.source, "all"):
                    per.setdefault(cls, {}).setdefault(label, []).append(row)
    return {
        cls: {
            "n": len(rows["fused"]),
            **{
                label: tuple(round(sum(r[k] for r in rs) / len(rs), 4) for k in range(3))
                for label, rs in rows.items()
            },
        }
        for cls, rows in per.items()
    }


def print_rows(table: dict[str, dict[str, float]]) -> None:
    cols = [k for k in next(iter(table.values())) if k != "macro"]
    classes = list(dict.fromkeys(c.rsplit(" ", 1)[0] for c in cols))
    print(f"   {'ranker':<30}" + "".join(f" | {c[:11]:^19}" for c in classes) + " | macro")
    for name, row in table.items():
        cells = "".join(
            f" | {row[f'{c} R@5']:.2f} {row[f'{c} R@10']:.2f} {row[f'{c} MRR']:.3f}"
            for c in classes
        )
        print(f"   {name:<30}{cells} | {row['macro']:.3f}")


if __name__ == "__main__":
    main()
