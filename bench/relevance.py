"""Relevance of BM25, vector and hybrid (RRF) recall on a labelled set. Prints figures.

The set (``bench/relevance_set.py``): 500 observations (50 hand-written targets + 450
distractors) and 72 queries, 49 of them paraphrases that share no stemmed term with their
target (checked against the FTS index on every run). For each ranker: recall@5, recall@10
and MRR (reciprocal rank within the top 50), overall and per query kind; for each embedder:
throughput (texts/s), query embedding latency, and the cost of embedding the whole set.

Embedders: ``minilm`` always; ``static`` when the distilled model exists (``make
static-model``) or ``--static DIR`` points at one (several ``--static`` compare
distillations). The real store, FTS5 ranker and FAISS index are used, as in the service.

Usage: python bench/relevance.py [--distractors 450] [--static DIR ...] [--json]
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.relevance_set import observations, queries  # noqa: E402
from workbench.models import ObservationDraft  # noqa: E402
from workbench.recall import fts, vectors  # noqa: E402
from workbench.recall.filters import SearchFilters  # noqa: E402
from workbench.recall.search import rrf  # noqa: E402
from workbench.store import observations as store_obs  # noqa: E402
from workbench.store.database import Store  # noqa: E402
from workbench.store.db import atomic  # noqa: E402

DEPTH = 50
Ranker = Callable[[str], list[int]]


def seed(store: Store, distractors: int) -> list[str]:
    """Store the set; return each observation's embedded text, in id order."""
    texts = []
    with atomic(store.conn):
        for item in observations(distractors):
            draft = ObservationDraft(
                type=item.type,
                title=item.title,
                narrative=item.narrative,
                facts=item.facts,
                concepts=item.concepts,
            )
            store_obs.insert(store.conn, draft, content_session_id="bench", project="bench")
    for row in store.conn.execute(
        "SELECT title, subtitle, narrative, facts, concepts FROM observations ORDER BY id"
    ):
        texts.append(vectors.embed_text(row))
    return texts


def shared_terms(conn: Any, query: str, relevant: int) -> list[str]:
    """The query's FTS terms (stemmed) that also occur in its target: [] for a true paraphrase."""
    expression = fts.match_expression(query) or ""
    terms = [t.strip() for t in expression.split(" OR ") if t.strip()]
    sql = "SELECT 1 FROM observations_fts WHERE observations_fts MATCH ? AND rowid = ?"
    return [t for t in terms if conn.execute(sql, (t, relevant)).fetchone()]


def evaluate(ranker: Ranker, qs: Sequence[tuple[str, str, int]]) -> dict[str, dict[str, float]]:
    by_kind: dict[str, list[int | None]] = {}
    for kind, query, relevant in qs:
        ranked = ranker(query)[:DEPTH]
        rank = ranked.index(relevant) + 1 if relevant in ranked else None
        by_kind.setdefault(kind, []).append(rank)
        by_kind.setdefault("all", []).append(rank)
    out = {}
    for kind, ranks in by_kind.items():
        n = len(ranks)
        out[kind] = {
            "n": n,
            "recall@5": sum(1 for r in ranks if r and r <= 5) / n,
            "recall@10": sum(1 for r in ranks if r and r <= 10) / n,
            "mrr": sum(1 / r for r in ranks if r) / n,
        }
    return out


def load_embedders(static_dirs: list[Path]) -> dict[str, Any]:
    from workbench.recall.embed import MiniLMEmbedder, StaticEmbedder, static_model_dir

    found: dict[str, Any] = {}
    started = time.perf_counter()
    found["minilm"] = MiniLMEmbedder(threads=2)
    print(f"loaded minilm in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    dirs = static_dirs or ([static_model_dir()] if static_model_dir().exists() else [])
    for path in dirs:
        embedder = StaticEmbedder(path)
        found[f"static[{path.name}, {embedder.dim}-d]"] = embedder
    return found


def embed_all(embedder: Any, texts: list[str]) -> tuple[Any, float]:
    embedder.embed(texts[:16])  # warm up
    started = time.perf_counter()
    matrix = embedder.embed(texts)
    return matrix, time.perf_counter() - started


def query_latency_ms(embedder: Any, qs: Sequence[tuple[str, str, int]]) -> float:
    times = []
    for _, query, _ in qs:
        started = time.perf_counter()
        embedder.embed([query])
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distractors", type=int, default=450)
    parser.add_argument("--static", type=Path, action="append", default=[])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()

    qs = queries()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "relevance.db")
        texts = seed(store, args.distractors)
        conn = store.conn

        def bm25(query: str) -> list[int]:
            return [
                i for i, _ in fts.rank(conn, "observations", query, SearchFilters(), limit=DEPTH)
            ]

        rankers: dict[str, Ranker] = {"bm25": bm25}
        throughput: dict[str, dict[str, float]] = {}
        ids = list(range(1, len(texts) + 1))
        vector_rankers: dict[str, Ranker] = {}
        for name, embedder in load_embedders(args.static).items():
            matrix, seconds = embed_all(embedder, texts)
            index = vectors.VectorIndex(embedder.name, embedder.dim, "flat")
            index.add(ids, [vectors.text_hash(t) for t in texts], matrix)
            throughput[name] = {
                "texts_per_s": round(len(texts) / seconds, 1),
                "embed_set_s": round(seconds, 3),
                "query_ms_p50": round(query_latency_ms(embedder, qs), 3),
                "dim": embedder.dim,
            }

            def vector(query: str, e: Any = embedder, ix: Any = index) -> list[int]:
                return [i for i, _ in ix.search(e.embed([query])[0], DEPTH)]

            vector_rankers[name] = vector
            rankers[f"vector {name}"] = vector

            def hybrid(query: str, v: Ranker = vector) -> list[int]:
                return [i for i, _ in rrf([("fts", bm25(query)), ("vec", v(query))])]

            rankers[f"hybrid bm25+{name}"] = hybrid
        if len(vector_rankers) > 1:

            def hybrid_all(query: str) -> list[int]:
                lists = [("fts", bm25(query))]
                lists += [(n, v(query)) for n, v in vector_rankers.items()]
                return [i for i, _ in rrf(lists)]

            rankers["hybrid bm25+all vectors"] = hybrid_all
        results = {name: evaluate(ranker, qs) for name, ranker in rankers.items()}
        leaks = [q for kind, q, rel in qs if kind == "paraphrase" and shared_terms(conn, q, rel)]
        store.close()

    if args.json:
        doc = {"relevance": results, "embedders": throughput, "paraphrase_leaks": leaks}
        print(json.dumps(doc, indent=2))
        return
    print(
        f"labelled set: {len(texts)} observations, {len(qs)} queries "
        f"({sum(1 for q in qs if q[0] == 'paraphrase')} paraphrases; sharing a stemmed term "
        f"with their target: {len(leaks)} {leaks or ''})\n"
    )
    header = f"{'ranker':<44} {'kind':<11} {'n':>3} {'R@5':>6} {'R@10':>6} {'MRR':>6}"
    print(header)
    print("-" * len(header))
    for name, by_kind in results.items():
        for kind in ("all", "paraphrase", "keyword"):
            m = by_kind.get(kind)
            if m:
                print(
                    f"{name:<44} {kind:<11} {m['n']:>3} {m['recall@5']:>6.2f} "
                    f"{m['recall@10']:>6.2f} {m['mrr']:>6.3f}"
                )
    print("\nembedder throughput (2 threads for MiniLM)")
    for name, t in throughput.items():
        print(
            f"  {name:<36} {t['texts_per_s']:>9.1f} texts/s  whole set {t['embed_set_s']:.2f} s"
            f"  query p50 {t['query_ms_p50']:.2f} ms  ({t['dim']}-d)"
        )


if __name__ == "__main__":
    main()
