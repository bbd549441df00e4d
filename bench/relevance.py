"""Relevance of BM25, vector and hybrid recall on the labelled sets, per question class.

The sets (``bench/relevance_sets.py``): ``coding`` (500 observations of coding work, 72
queries, 49 of them paraphrases sharing no stemmed term with their target) and
``conversations`` (one memory per turn of 16 long sessions; single-hop, multi-hop, temporal
and paraphrase questions with their evidence turns); with the public QMSum files present,
``meetings`` and ``committee`` (one memory per meeting turn, one project per meeting, each
question searched with its meeting's project filter). Paraphrases are checked against the FTS
index on every run: a "leak" is a paraphrase that shares a stemmed term with its evidence.

Every ranker runs through the real ``SearchEngine`` (real store, FTS5, FAISS), 50 hits deep:

- ``bm25`` (mode=fts), ``vector <model>`` (mode=vector);
- ``hybrid`` (mode=hybrid with the settings' defaults: weighted, score-aware fusion with the
  BM25 coverage gate; its parameters were chosen by ``bench/relevance_cv.py`` across the
  sets, never on the set reported alone);
- ``hybrid + previous turn`` (i21-context's opt-in ``search_context_weight``, with the fusion
  ``bench/relevance_context.py`` chose around it; off by default);
- ``hybrid rrf`` (the fusion before issue 10: reciprocal rank, k=60) and ``hybrid weighted
  0.2/0.8/0.4`` (the defaults before issue 21), side by side.
- ``+rerank`` rows: hybrid with the second stage (``workbench/recall/rerank.py``), with the
  built-in weights and with weights trained (``recall/rerank_train.py``) on questions
  generated from each set's memories, never on its gold questions: "<set> memories" is the
  reported set's own memories, "(cross-set)" the other set's.

Then each second-stage method (features, maxsim at depth 30 and 50) against hybrid per set,
with p50/p95, the methods taking turns per question (``bench/relevance_rerank.py``).

The last column is the p50 latency of one search (ms, in process, query embedding cached), so
the rerank rows show what the second stage adds.

Per ranker and class: R@5 and R@10 (the share of a question's evidence in the top k, averaged)
and MRR (1 / rank of the first evidence hit). With ``--throughput``, the embedder's speed.

Usage: python bench/relevance.py [--set coding|conversations|meetings|committee] [--qmsum DIR]
       [--static DIR ...] [--json] [--throughput] [--no-rerank]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import relevance_rerank  # noqa: E402
from bench.relevance_sets import (  # noqa: E402
    ALL_SETS,
    CLASSES,
    SETS,
    CachedEmbedder,
    IndexRanker,
    Loaded,
    Question,
    available_sets,
    load,
    served,
)
from workbench.recall import fts  # noqa: E402
from workbench.recall.filters import SearchFilters  # noqa: E402
from workbench.recall.fusion import FusionParams  # noqa: E402
from workbench.recall.search import SearchEngine  # noqa: E402

DEPTH = 50
BEFORE_21 = FusionParams("weighted", 0.2, 0.8, 0.4, neighbour_weight=0.0, date_weight=0.0)
# main at fd213fb: weighted 0.4 / 0.6 / gate 0.3, neighbours 0.1, no date lift
MAIN_BEFORE = FusionParams("weighted", 0.4, 0.6, 0.3, neighbour_weight=0.1, date_weight=0.0)
# i21-context's opt-in: each turn read with its previous turn (search_context_weight), with
# the fusion re-chosen around it by bench/relevance_context.py (off by default: see there).
WITH_CONTEXT = FusionParams("weighted", 0.5, 0.5, 0.3, neighbour_weight=0.0, context_weight=0.5)
Ranker = Callable[[str], list[int]]


def metrics(ranked: Sequence[int], relevant: Sequence[int]) -> tuple[float, float, float]:
    """(R@5, R@10, reciprocal rank) of one question."""
    gold = set(relevant)
    r5 = len(gold & set(ranked[:5])) / len(gold)
    r10 = len(gold & set(ranked[:10])) / len(gold)
    first = next((n for n, i in enumerate(ranked, start=1) if i in gold), None)
    return r5, r10, (1 / first if first else 0.0)


def evaluate(ranker: Ranker, qs: Sequence[Question]) -> dict[str, dict[str, float]]:
    by_class: dict[str, list[tuple[float, float, float]]] = {}
    ms_per_query = []
    for q in qs:
        ranker(q.text)  # warm: the query's embedding is cached, so every row times the same work
        started = time.perf_counter()
        ranked = ranker(q.text)
        ms_per_query.append((time.perf_counter() - started) * 1000)
        m = metrics(ranked[:DEPTH], q.relevant)
        by_class.setdefault(q.cls, []).append(m)
        by_class.setdefault("all", []).append(m)
    out: dict[str, dict[str, float]] = {
        cls: {
            "n": len(ms),
            "recall@5": sum(m[0] for m in ms) / len(ms),
            "recall@10": sum(m[1] for m in ms) / len(ms),
            "mrr": sum(m[2] for m in ms) / len(ms),
        }
        for cls, ms in by_class.items()
    }
    out["all"]["p50_ms"] = statistics.median(ms_per_query)
    out["all"]["p95_ms"] = sorted(ms_per_query)[int(len(ms_per_query) * 0.95)]
    return out


def engine_ranker(
    loaded: Loaded,
    ranker: IndexRanker,
    mode: str,
    params: FusionParams,
    rerank_dir: Path | None = None,
) -> Ranker:
    """``rerank_dir``: rerank with the model in that dir (the built-in default when it has
    none); None: no second stage."""
    settings = SimpleNamespace(
        search_fusion=params.method,
        search_fts_weight=params.fts_weight,
        search_vector_weight=params.vector_weight,
        search_fts_gate=params.fts_gate,
        search_rrf_k=params.rrf_k,
        search_rrf_fts_share=params.rrf_fts_share,
        search_rrf_gate=params.rrf_gate,
        search_neighbour_weight=params.neighbour_weight,
        search_date_weight=params.date_weight,
        search_feedback_weight=params.feedback_weight,
        search_context_weight=params.context_weight,
        search_rerank=rerank_dir is not None,
        search_rerank_depth=DEPTH,
        data_dir=rerank_dir,
    )
    engine = SearchEngine(loaded.conn, settings, ranker)

    def run(query: str) -> list[int]:
        # A set of many meetings is searched with the question's own project filter.
        project = loaded.project_of(query)
        filters = SearchFilters(project=project) if project != loaded.name else None
        result = engine.search(query, filters, types="observations", mode=mode, limit=DEPTH)
        return [h.id for h in result.observations]

    return run


def shared_terms(conn: Any, query: str, relevant: Sequence[int]) -> list[str]:
    """The query's FTS pieces (stemmed) found in any evidence: [] for a true paraphrase."""
    sql = "SELECT 1 FROM observations_fts WHERE observations_fts MATCH ? AND rowid = ?"
    pieces = fts.query_pieces(query)
    return [p for p in pieces if any(conn.execute(sql, (p, r)).fetchone() for r in relevant)]


def rankers_for(loaded: Loaded, embedders: Sequence[CachedEmbedder]) -> dict[str, Ranker]:
    out: dict[str, Ranker] = {"bm25": engine_ranker(loaded, loaded.ranker, "fts", FusionParams())}
    for embedder in embedders:
        ranker = loaded.ranker if embedder is loaded.ranker.embedder else None
        if ranker is None:
            ranker = IndexRanker(embedder.name, embedder, None)
            from workbench.recall import vectors

            index = vectors.VectorIndex(embedder.name, embedder.dim, "flat")
            ids = [
                int(r[0]) for r in loaded.conn.execute("SELECT id FROM observations ORDER BY id")
            ]
            index.add(
                ids, [vectors.text_hash(t) for t in loaded.texts], embedder.embed(loaded.texts)
            )
            ranker.index = index
        label = embedder.name
        out[f"vector {label}"] = engine_ranker(loaded, ranker, "vector", FusionParams())
        out[f"hybrid bm25+{label}"] = engine_ranker(loaded, ranker, "hybrid", FusionParams())
        out[f"hybrid rrf bm25+{label} (before issue 10)"] = engine_ranker(
            loaded,
            ranker,
            "hybrid",
            FusionParams(method="rrf", rrf_k=60, neighbour_weight=0.0, date_weight=0.0),
        )
        out["hybrid weighted 0.2/0.8/0.4 (before issue 21)"] = engine_ranker(
            loaded, ranker, "hybrid", BEFORE_21
        )
        out[f"hybrid bm25+{label} (main, before i21-first)"] = engine_ranker(
            loaded, ranker, "hybrid", MAIN_BEFORE
        )
        out[f"hybrid bm25+{label} + previous turn (opt-in)"] = engine_ranker(
            loaded, ranker, "hybrid", WITH_CONTEXT
        )
    return out


def train_reranker(loaded: Loaded, out: Path) -> dict[str, Any]:
    """Fit the reranker on questions generated from ``loaded``'s memories (never its gold
    questions) and save it in ``out``; returns the training report."""
    from workbench.recall import rerank, rerank_train

    model, report = rerank_train.train(loaded.conn, loaded.ranker, limit=400)
    rerank.save_model(SimpleNamespace(data_dir=out), model)
    gold = {q.text for q in loaded.questions}
    generated = {g.text for g in rerank_train.generate(loaded.conn, limit=400)}
    report["gold_questions_among_generated"] = len(gold & generated)
    return report


def stage_ms(loaded: Loaded) -> dict[str, float]:
    """The second stage alone (default weights, 50 candidates): p50 / p95 ms per question."""
    from workbench.recall import rerank
    from workbench.recall.rerank_train import CollectingEngine

    engine = CollectingEngine(loaded.conn, None, loaded.ranker)
    times = []
    for q in loaded.questions:
        engine.search(q.text, types="observations", limit=DEPTH)
        assert engine.last is not None
        started = time.perf_counter()
        rerank.order(loaded.conn, q.text, engine.last, rerank.Model.default(), DEPTH)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {"p50": statistics.median(times), "p95": times[int(len(times) * 0.95)]}


def rerank_rankers(loaded: Loaded, dirs: dict[str, Path]) -> dict[str, Ranker]:
    """hybrid + rerank, with the default weights and each trained model in ``dirs``."""
    label = loaded.ranker.embedder.name
    out = {
        f"hybrid bm25+{label} +rerank default": engine_ranker(
            loaded, loaded.ranker, "hybrid", FusionParams(), dirs["default"]
        )
    }
    for name, path in dirs.items():
        if name != "default":
            out[f"hybrid +rerank trained on {name}"] = engine_ranker(
                loaded, loaded.ranker, "hybrid", FusionParams(), path
            )
    return out


def load_static(dirs: list[Path]) -> list[CachedEmbedder]:
    from workbench.recall.embed import StaticEmbedder, static_model_dir

    found = dirs or ([static_model_dir()] if static_model_dir().exists() else [])
    out = []
    for path in found:
        try:
            probe = StaticEmbedder(path)
        except ImportError as exc:  # the model is built but its runtime is not installed
            print(f"static model {path} skipped: {exc}", file=sys.stderr)
            continue
        out.append(CachedEmbedder(f"static-{path.name}", probe.dim, lambda e=probe: e))
    return out


def load_onnx(tokens: list[int]) -> list[CachedEmbedder]:
    """The int8 ONNX MiniLM (``workbench models build``) at each token cut in ``tokens``."""
    from workbench.recall.embed import OnnxEmbedder

    out = []
    for cut in tokens:
        probe = OnnxEmbedder(threads=2, max_tokens=cut)
        out.append(CachedEmbedder(probe.name, probe.dim, lambda e=probe: e))
    return out


def throughput(texts: list[str], queries: list[str]) -> dict[str, float]:
    """MiniLM speed on this machine (loads the model; 2 threads, as the service's indexer)."""
    from workbench.recall.embed import MiniLMEmbedder

    model = MiniLMEmbedder(threads=2)
    model.embed(texts[:16])
    started = time.perf_counter()
    model.embed(texts)
    seconds = time.perf_counter() - started
    times = []
    for query in queries:
        t0 = time.perf_counter()
        model.embed([query])
        times.append((time.perf_counter() - t0) * 1000)
    return {
        "texts_per_s": round(len(texts) / seconds, 1),
        "embed_set_s": round(seconds, 3),
        "query_ms_p50": round(statistics.median(times), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--set", choices=ALL_SETS, action="append", help="default: every set")
    parser.add_argument("--qmsum", type=Path, default=None, help="QMSum's data/ALL directory")
    parser.add_argument("--static", type=Path, action="append", default=[])
    parser.add_argument("--throughput", action="store_true", help="also time MiniLM")
    parser.add_argument(
        "--onnx",
        type=int,
        action="append",
        default=[],
        metavar="TOKENS",
        help="also the int8 ONNX MiniLM cut at TOKENS (repeat: --onnx 128 --onnx 256)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--no-rerank", action="store_true", help="skip the reranker rows")
    parser.add_argument(
        "--vector-index",
        default="flat",
        help="the MiniLM index kind (hnsw_fp16: its graph walked at any size)",
    )
    args = parser.parse_args()

    model = served()
    embedders = [model, *load_static(args.static), *load_onnx(args.onnx)]
    doc: dict[str, Any] = {"sets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        here = available_sets(args.qmsum)
        names = [n for n in (args.set or here) if n in here]
        wanted = dict.fromkeys([*SETS, *names])  # the reranker trains on SETS
        every = {
            name: load(name, Path(tmp), model, args.qmsum, kind=args.vector_index)
            for name in wanted
        }
        # The reranker is never trained on the questions it is reported on: on questions
        # generated from a set's memories ("own memories"), and on the other set (cross-set).
        dirs: dict[str, Path] = {"default": Path(tmp) / "rerank-default"}
        doc["rerank_training"] = {}
        if not args.no_rerank:
            for name in SETS:
                dirs[name] = Path(tmp) / f"rerank-{name}"
                doc["rerank_training"][name] = train_reranker(every[name], dirs[name])
        for name in names:
            loaded = every[name]
            chosen = rankers_for(loaded, embedders)
            if not args.no_rerank:
                own = {"default": dirs["default"]}
                own.update(
                    {(f"{n} memories" if n == name else f"{n} (cross-set)"): dirs[n] for n in SETS}
                )
                chosen.update(rerank_rankers(loaded, own))
            results = {
                label: evaluate(ranker, loaded.questions) for label, ranker in chosen.items()
            }
            leaks = [
                q.text
                for q in loaded.questions
                if q.cls == "paraphrase" and shared_terms(loaded.conn, q.text, q.relevant)
            ]
            doc["sets"][name] = {
                "rerank_stage_ms": None if args.no_rerank else stage_ms(loaded),
                "observations": len(loaded.texts),
                "questions": len(loaded.questions),
                "paraphrase_leaks": leaks,
                "relevance": results,
            }
            if args.throughput and name == "coding":
                doc["throughput"] = throughput(loaded.texts, [q.text for q in loaded.questions])
        doc["rerank_methods"] = None if args.no_rerank else rerank_method_rows(every, names)
        for loaded in every.values():
            loaded.store.close()
    for embedder in embedders:
        embedder.save()
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    for name, body in doc["sets"].items():
        print_table(name, body)
    if doc["rerank_methods"]:
        relevance_rerank.print_rows(doc["rerank_methods"])
    for name, body in doc["sets"].items():
        if body["rerank_stage_ms"]:
            ms = body["rerank_stage_ms"]
            print(f"rerank stage alone on {name}: p50 {ms['p50']:.2f} ms, p95 {ms['p95']:.2f} ms")
    for name, report in doc["rerank_training"].items():
        held = report["holdout"]
        print(
            f"rerank trained on {name} memories: {report['groups']} generated questions "
            f"({report['gold_questions_among_generated']} of them gold questions); held-out "
            f"MRR fused {held['fused']['mrr']:.3f} -> reranked {held['reranked']['mrr']:.3f}"
        )
    if "throughput" in doc:
        t = doc["throughput"]
        print(
            f"minilm (2 threads): {t['texts_per_s']} texts/s, coding set in {t['embed_set_s']} s,"
            f" query p50 {t['query_ms_p50']} ms"
        )


def rerank_method_rows(every: dict[str, Loaded], names: Sequence[str]) -> dict[str, Any]:
    """Each second-stage method vs hybrid on ``names``, p50/p95 per row (bench/relevance_rerank)."""
    return relevance_rerank.rows(every, names, FusionParams())


def print_table(name: str, body: dict[str, Any]) -> None:
    classes = ("all", *CLASSES[name])
    print(
        f"\n== set {name}: {body['observations']} memories, {body['questions']} questions; "
        f"paraphrases sharing a stemmed term with their evidence: {len(body['paraphrase_leaks'])}"
        f" {body['paraphrase_leaks'] or ''}"
    )
    head = f"{'ranker':<46}" + "".join(f" | {c:^20}" for c in classes) + " | p50 / p95 ms"
    sub = f"{'':<46}" + "".join(f" | {'R@5':>6}{'R@10':>7}{'MRR':>7}" for _ in classes)
    counts = f"{'(questions)':<46}" + "".join(
        f" | {next(iter(body['relevance'].values()))[c]['n']:>20}" for c in classes
    )
    print(head)
    print(sub)
    print(counts)
    print("-" * len(sub))
    for label, by_class in body["relevance"].items():
        cells = "".join(
            f" | {by_class[c]['recall@5']:>6.2f}{by_class[c]['recall@10']:>7.2f}"
            f"{by_class[c]['mrr']:>7.3f}"
            for c in classes
        )
        all_ = by_class["all"]
        print(f"{label:<46}{cells} | {all_['p50_ms']:>6.2f} / {all_['p95_ms']:.2f}")


if __name__ == "__main__":
    main()
