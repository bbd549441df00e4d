"""The second stage's rows for ``bench/relevance.py``: each rerank method vs hybrid, per set.

Methods (``workbench/recall/rerank*.py``), each through the real ``SearchEngine`` on the set's
real store and FAISS index:

- ``hybrid``: no second stage (the reference of every row below);
- ``+rerank features``: the linear model with its built-in weights, depth 50;
- ``+rerank maxsim d30`` / ``d50``: late interaction over MiniLM's word pieces (the token table
  of ``workbench rerank build``), reordering the fused top 30 / 50;
- ``+rerank learned``: the shipped learning-to-rank stage (``rerank_learned``). Its weights
  were fitted on these sets, so its row here is in-sample (its latency is what counts);
  ``bench/relevance_ltr.py`` has its held-out figures.

The maxsim stage has one weight (``search_rerank_maxsim_fused``: the fused score's share).
It is chosen by **leave one set out**: the row of set S uses the weight that maximises the
mean MRR over the *other* sets (``GRID``), so no set's figures are tuned on that set;
``choose_weight`` over every set gives the shipped default. Questions run with their set's
project filter when the set has one (``Loaded.project_of``).

Latency: p50 / p95 of one whole search (ms, in process, the query's embedding cached), the
methods taking turns question by question, so a row's figure minus hybrid's is what its stage
adds; the machine is shared and loaded.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from workbench.recall import rerank_maxsim, rerank_tokens
from workbench.recall.filters import SearchFilters
from workbench.recall.rerank_features import Candidates
from workbench.recall.rerank_train import CollectingEngine
from workbench.recall.search import SearchEngine

DEPTH = 50
GRID = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
METHODS: dict[str, dict[str, Any]] = {
    "hybrid": {"search_rerank": False},
    "+rerank features": {"search_rerank": True, "search_rerank_method": "features"},
    "+rerank maxsim d30": {
        "search_rerank": True,
        "search_rerank_method": "maxsim",
        "search_rerank_depth": 30,
    },
    "+rerank maxsim d50": {"search_rerank": True, "search_rerank_method": "maxsim"},
    # The shipped learning-to-rank stage (its weights fitted on every set: these rows are NOT
    # held out; bench/relevance_ltr.py prints the held-out figures).
    "+rerank learned": {"search_rerank": True, "search_rerank_method": "learned"},
}


@dataclass
class Collected:
    """A question's fused candidates (hybrid, before any second stage) and its gold ids."""

    query: str
    gold: frozenset[int]
    candidates: Candidates


def _filters(loaded: Any, query: str) -> SearchFilters | None:
    project_of = getattr(loaded, "project_of", None)
    if project_of is None:
        return None
    project = project_of(query)
    return SearchFilters(project=project) if project != loaded.name else None


def collect(loaded: Any) -> list[Collected]:
    """Every question's fused candidates, through the real engine (hybrid, no rerank)."""
    engine = CollectingEngine(loaded.conn, None, loaded.ranker)
    out = []
    for q in loaded.questions:
        engine.last = None
        engine.search(q.text, _filters(loaded, q.text), types="observations", limit=1)
        if engine.last is not None:
            out.append(Collected(q.text, frozenset(q.relevant), engine.last))
    return out


def metrics(order: Sequence[int], gold: frozenset[int]) -> tuple[float, float, float]:
    r5 = len(gold & set(order[:5])) / len(gold)
    r10 = len(gold & set(order[:10])) / len(gold)
    first = next((n for n, i in enumerate(order, start=1) if i in gold), None)
    return r5, r10, (1 / first if first else 0.0)


@dataclass
class Scored:
    """A question's fused top ``depth`` and their MaxSim scores (independent of the weight)."""

    head: list[tuple[int, float]]
    maxsim: list[float]
    gold: frozenset[int]


def score(conn: Any, questions: Sequence[Collected], depth: int) -> list[Scored]:
    """MaxSim of each question's fused top ``depth``, once, for every weight of the grid."""
    table = rerank_tokens.load()
    out = []
    for q in questions:
        head = list(q.candidates.fused[:depth])
        texts = rerank_maxsim.candidate_texts(conn, [i for i, _ in head])
        out.append(Scored(head, rerank_maxsim.scores(table, q.query, texts), q.gold))
    return out


def maxsim_mrr(scored: Sequence[Scored], weight: float) -> float:
    """Mean MRR of the maxsim stage at ``weight`` (a head under 2 keeps its fused order)."""
    total = 0.0
    for q in scored:
        head = rerank_maxsim.combine(q.head, q.maxsim, weight) if len(q.head) > 1 else q.head
        total += metrics([i for i, _ in head], q.gold)[2]
    return total / max(len(scored), 1)


def choose_weight(scored: Mapping[str, list[Scored]], sets: Sequence[str]) -> float:
    """The grid weight with the best mean (over ``sets``) MRR; ties: the larger fused share.

    MRR of the head only: a gold item beyond the depth counts the same for every weight.
    """
    if not sets:
        return rerank_maxsim.DEFAULT_FUSED_WEIGHT
    return max(GRID, key=lambda w: (statistics.fmean(maxsim_mrr(scored[s], w) for s in sets), w))


def held_out_weights(scored: Mapping[str, list[Scored]]) -> dict[str, float]:
    """Per set: the weight chosen on every other set (leave one set out); and on all sets."""
    names = list(scored)
    out = {s: choose_weight(scored, [o for o in names if o != s]) for s in names}
    out["all sets"] = choose_weight(scored, names)
    return out


def run_method(
    loaded: Any, overrides: Mapping[str, Any], params: Any
) -> Callable[[str], list[int]]:
    values: dict[str, Any] = {
        "search_fusion": params.method,
        "search_fts_weight": params.fts_weight,
        "search_vector_weight": params.vector_weight,
        "search_fts_gate": params.fts_gate,
        "search_rerank_depth": DEPTH,
        "data_dir": None,
    }
    values.update(overrides)
    engine = SearchEngine(loaded.conn, SimpleNamespace(**values), loaded.ranker)

    def run(query: str) -> list[int]:
        result = engine.search(
            query, _filters(loaded, query), types="observations", mode="hybrid", limit=DEPTH
        )
        return [h.id for h in result.observations]

    return run


def evaluate(
    runs: Mapping[str, Callable[[str], list[int]]], questions: Sequence[Any]
) -> dict[str, dict[str, float]]:
    """Per method: R@5, R@10, MRR over ``questions`` and the p50 / p95 of one search (ms).

    The methods take turns question by question, so a load spike on the shared machine costs
    every row alike.
    """
    scores: dict[str, list[tuple[float, float, float]]] = {label: [] for label in runs}
    times: dict[str, list[float]] = {label: [] for label in runs}
    for q in questions:
        for label, run in runs.items():
            run(q.text)  # warm: the query's embedding is cached, every row times the same work
            started = time.perf_counter()
            ranked = run(q.text)
            times[label].append((time.perf_counter() - started) * 1000)
            scores[label].append(metrics(ranked, frozenset(q.relevant)))
    out = {}
    for label in runs:
        got, took, n = scores[label], sorted(times[label]), len(scores[label])
        out[label] = {
            "n": n,
            "recall@5": sum(s[0] for s in got) / n,
            "recall@10": sum(s[1] for s in got) / n,
            "mrr": sum(s[2] for s in got) / n,
            "p50_ms": statistics.median(took),
            "p95_ms": took[min(n - 1, int(n * 0.95))],
        }
    return out


def rows(every: Mapping[str, Any], names: Sequence[str], params: Any) -> dict[str, Any]:
    """``{set: {method: figures}}`` for ``names``; maxsim weights held out across ``every``.

    Without a token table (``workbench rerank build``) the maxsim rows are left out, saying so.
    """
    reason = rerank_tokens.problem()
    needs_table = ("maxsim", "learned")
    methods = {
        k: v for k, v in METHODS.items() if reason is None or not any(n in k for n in needs_table)
    }
    out: dict[str, Any] = {"skipped": reason, "weights": {}, "sets": {}}
    if reason is None:
        collected = {s: collect(loaded) for s, loaded in every.items()}
        for depth in (30, 50):
            scored = {s: score(every[s].conn, qs, depth) for s, qs in collected.items()}
            out["weights"][f"d{depth}"] = held_out_weights(scored)
    for name in names:
        loaded = every[name]
        runs = {}
        for label, overrides in methods.items():
            settings = dict(overrides)
            if "maxsim" in label:
                depth = int(settings.get("search_rerank_depth", DEPTH))
                settings["search_rerank_maxsim_fused"] = out["weights"][f"d{depth}"][name]
            runs[label] = run_method(loaded, settings, params)
        out["sets"][name] = evaluate(runs, loaded.questions)
    return out


def print_rows(doc: Mapping[str, Any]) -> None:
    if doc["skipped"]:
        print(f"\nmaxsim rows skipped: {doc['skipped']}")
    print("\n== second stage per set (maxsim weight: leave one set out; machine shared, loaded)")
    print(
        f"{'set':<14} {'method':<20} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for name, table in doc["sets"].items():
        for label, f in table.items():
            print(
                f"{name:<14} {label:<20} {f['recall@5']:>6.3f} {f['recall@10']:>6.3f}"
                f" {f['mrr']:>6.3f} {f['p50_ms']:>7.2f} {f['p95_ms']:>7.2f}"
            )
    for depth, weights in doc["weights"].items():
        print(f"maxsim {depth} fused weight by held-out set: {weights}")


def main() -> None:
    """Standalone: every available set (``relevance_sets``), this file's rows only."""
    import argparse
    import json
    import tempfile
    from pathlib import Path

    from bench import relevance_sets
    from workbench.recall.fusion import FusionParams

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--set", action="append", help="report only these (default: every set)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    available = getattr(relevance_sets, "available_sets", lambda: relevance_sets.SETS)()
    model = relevance_sets.minilm()
    with tempfile.TemporaryDirectory() as tmp:
        every = {name: relevance_sets.load(name, Path(tmp), model) for name in available}
        model.save()  # the sets' vectors, before the (long) rows: a stopped run keeps them
        doc = rows(every, [n for n in (args.set or available) if n in every], FusionParams())
        for loaded in every.values():
            loaded.store.close()
    model.save()
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print_rows(doc)


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
