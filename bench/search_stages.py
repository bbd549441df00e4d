"""Where a search's CPU goes at 100k with full vectors, stage by stage, in-process. Prints figures.

``bench/search.py --root A --root B`` says how long each route takes through HTTP and how much
CPU the service spends on it; this says which stage spends it, so the next cut is chosen by
figures. One checkout per run (``--root``, default this tree), on a copy of a seeded data dir
(``--seeded``: a ``bench/search.py --keep`` run's, with a vector for every observation):

1. opens the store and builds the vector index from its embeddings cache, as the service does
   (``Indexer.load`` + ``sync``), and a ``SearchEngine`` over both;
2. per route (full text, hybrid, hybrid as JSON, timeline by query), runs ``--queries`` new
   queries (each text new to the query-embedding cache) and wraps each stage in a CPU clock
   of the thread that runs it (``time.thread_time``): the full-text side, the coverage
   scratch table, the neighbours' lookup, the full-text hits' cosines, reading the page's
   rows, the total count (``format=json`` counts ``totalResults``; the text answer does
   not), and, on the vector pool's thread, the query embedding and the index scan;
3. prints, per route, each stage's CPU per request (mean, ms) and the request's whole CPU
   (the process's, ``getrusage``: both threads), next to the stages' sum.

Figures, never assertions; CPU, not wall time, because the box is shared (the load average
is printed). "Full text (all kinds)" includes the summaries and prompts that hybrid ranks
while its vector side runs; the full-text hits' cosines include an index search of just
those ids (counted under the index scan too); the neighbours' share from the lookup of
only the hits that could be on the page or first (``head_of_smooth``) is its own stage.

``--set K=V`` (repeatable) runs it under other settings (the second stage:
``--set search_rerank=true --set search_rerank_method=learned``); ``--dump FILE`` writes every
reply, so two runs (before and after a change) can be compared for identical replies.

Usage: python bench/search_stages.py --seeded DIR [--root DIR] [--queries 200] [--set K=V]
       [--dump FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# (label, module path, attribute path): what each stage is, and where it is wrapped.
STAGES: list[tuple[str, str, str]] = [
    ("full text (all kinds)", "workbench.recall.fts", "rank"),
    ("coverage (scratch table)", "workbench.recall.fusion", "coverage"),
    ("neighbours' lookup + share", "workbench.recall.search", "SearchEngine._with_neighbours"),
    ("  contenders' only", "workbench.recall.search", "head_of_smooth"),
    ("full-text hits' cosines", "workbench.recall.search", "SearchEngine._cosines_of"),
    ("fusion", "workbench.recall.fusion", "fuse"),
    ("page rows (hydrate)", "workbench.recall.search", "SearchEngine._hydrate"),
    ("total count (format=json only)", "workbench.recall.totals", "count"),
    ("query embedding (vector thread)", "workbench.recall.indexer", "IndexRanker.embed_query"),
    ("index scan (vector thread)", "workbench.recall.vectors", "VectorIndex.search"),
    # The second stage (``--set search_rerank=true --set search_rerank_method=learned``).
    ("second stage (all of it)", "workbench.recall.rerank", "rerank_or_fused"),
    ("  its model's check (problem)", "workbench.recall.rerank", "problem"),
    ("  candidates' texts (SELECT)", "workbench.recall.rerank_features", "load_texts"),
    ("  MaxSim", "workbench.recall.rerank_maxsim", "scores"),
    ("  learned features (all)", "workbench.recall.rerank_learned", "compute"),
    ("    rank + text features", "workbench.recall.rerank_features", "compute"),
    ("    sessions' lookup", "workbench.recall.rerank_learned", "_sessions"),
    ("  model scores + order", "workbench.recall.rerank_learned", "ranked"),
]


def wrap(spent: dict[str, float], label: str, module: str, attribute: str) -> None:
    """Replace ``module.attribute`` by a copy that adds its thread's CPU to ``spent[label]``
    (nothing when the checkout has no such stage: an older one shows 0 there)."""
    import importlib

    owner: Any = importlib.import_module(module)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    inner: Callable[..., Any] | None = getattr(owner, name, None)
    if inner is None:
        return

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.thread_time() - started

    setattr(owner, name, timed)


def reply_of(reply: object) -> object:
    """What a route answered, for ``--dump`` (ids, scores, the stage that placed each hit)."""
    dump = getattr(reply, "model_dump", None)
    if callable(dump):
        return dump()
    if is_dataclass(reply) and not isinstance(reply, type):
        return asdict(reply)
    return reply


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(args: argparse.Namespace) -> list[str]:
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    from bench.search import queries
    from workbench.recall.indexer import Indexer
    from workbench.recall.search import SearchEngine
    from workbench.settings import load_settings
    from workbench.store.database import Store

    work = Path(tempfile.mkdtemp(prefix="wb-bench-stages-"))
    try:
        data = work / "data"
        shutil.copytree(args.seeded, data, ignore=shutil.ignore_patterns("index", "*.log"))
        overrides = dict(pair.split("=", 1) for pair in args.set)
        settings = load_settings(data, embedder="minilm", **overrides)
        store = Store(settings.db_path)
        indexer = Indexer(store, settings)
        indexer.load()
        indexer.sync(full=True)
        prepare = getattr(indexer.index, "prepare_prefilter", None)
        if prepare is not None:  # as the service's indexer thread does after its pass
            prepare()
        engine = SearchEngine(store, settings, ranker=indexer.ranker)
        spent: dict[str, float] = {}
        for label, module, attribute in STAGES:
            wrap(spent, label, module, attribute)
        routes: dict[str, Callable[[str], object]] = {
            "full text": lambda q: engine.search(q, mode="fts", count_totals=False),
            "hybrid": lambda q: engine.search(q, count_totals=False),
            "hybrid, json (counted)": lambda q: engine.search(q),
            "timeline by query": lambda q: engine.timeline(query=q),
        }
        texts = queries(args.queries + 10, random.Random(args.seed))
        per_route: dict[str, dict[str, float]] = {}
        whole: dict[str, list[float]] = {}
        replies: dict[str, list[object]] = {}
        for route, call in routes.items():
            for q in texts[:10]:
                call(f"{q} warm {route}")
            spent.clear()
            for q in texts[10:]:
                before = process_cpu()
                reply = call(f"{q} {route}")
                replies.setdefault(route, []).append(reply_of(reply))
                whole.setdefault(route, []).append(process_cpu() - before)
            per_route[route] = {k: v / args.queries for k, v in spent.items()}
        store.close()
        if args.dump:
            text = json.dumps(replies, indent=1, default=str) + "\n"
            Path(args.dump).write_text(text, encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    names = list(routes)
    load = os.getloadavg()[0]
    lines = [
        f"{root}: {args.queries} queries per route, load average {load:.1f} on "
        f"{os.cpu_count()} cores (CPU ms per request, mean; the box is shared)",
        f"{'stage':36}" + "".join(f"{n:>24}" for n in names),
    ]
    for label, _, _ in STAGES:
        cells = "".join(f"{per_route[n].get(label, 0.0) * 1000:>24.2f}" for n in names)
        lines.append(f"{label:36}{cells}")
    sums = "".join(f"{sum(per_route[n].values()) * 1000:>24.2f}" for n in names)
    lines.append(f"{'sum of the stages above':36}{sums}")
    totals = "".join(f"{statistics.mean(whole[n]) * 1000:>24.2f}" for n in names)
    lines.append(f"{'whole request (process CPU)':36}{totals}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeded", required=True, help="a seeded 100k data dir (copied)")
    parser.add_argument("--root", default=str(ROOT), help="the checkout to measure")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument(
        "--set", action="append", default=[], metavar="K=V", help="e.g. search_rerank=true"
    )
    parser.add_argument("--dump", help="write every reply here (JSON), to compare two runs")
    args = parser.parse_args(argv)
    print("\n".join(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
