"""Vector figures for ``bench/search.py`` (its ``vector_figures`` slot), or on their own.

Embedding 100,000 texts with MiniLM takes ~10 minutes on 2 cores, so the store is given
vectors the cheap way, and only the latency figures depend on them:
1. MiniLM embeds a sample of the seeded texts for real (that gives the texts/s figure);
2. every observation gets a vector near one of those real embeddings (a real embedding plus
   noise, re-normalised): clustered like real data, which is what approximate indexes must be
   measured on, but *not* its own text's meaning, so no relevance is measured here
   (``bench/relevance.py`` does that);
3. those vectors go into the ``embeddings`` cache under each observation's real text hash, so
   the real service builds its index from the cache exactly as after a restart.

Then: in-process FAISS build time, memory and query latency (flat vs HNSW, HNSW recall@10
against exact, filtered search by selector / exact subset / post-filter with oversampling),
MiniLM query-embedding latency, the service's index build from the cache, and
``/api/search?mode=vector`` and hybrid latency through HTTP for each index kind.

Usage: python bench/search_vectors.py [--sizes 10000,100000] [--queries 200] [--sample 2000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.recall import vectors  # noqa: E402
from workbench.store.database import Store  # noqa: E402
from workbench.store.db import atomic  # noqa: E402

NOISE = 0.25
_MODEL: Any = None


def minilm() -> Any:
    global _MODEL
    if _MODEL is None:
        from workbench.recall.embed import MiniLMEmbedder

        _MODEL = MiniLMEmbedder(threads=2)
    return _MODEL


def seed_vectors(db_path: Path, sample: int, rng: random.Random) -> tuple[dict[int, Any], float]:
    """Cache a clustered vector for every observation; return (id → vector, MiniLM texts/s)."""
    import numpy as np

    store = Store(db_path)
    rows = store.conn.execute(
        "SELECT id, title, subtitle, narrative, facts, concepts FROM observations ORDER BY id"
    ).fetchall()
    texts = [vectors.embed_text(r) for r in rows]
    picked = rng.sample(range(len(texts)), min(sample, len(texts)))
    model = minilm()
    model.embed([texts[i] for i in picked[:16]])
    started = time.perf_counter()
    centres = model.embed([texts[i] for i in picked])
    rate = len(picked) / (time.perf_counter() - started)
    gen = np.random.default_rng(7)
    choice = gen.integers(0, len(centres), len(texts))
    matrix = centres[choice] + NOISE / np.sqrt(model.dim) * gen.normal(size=(len(texts), model.dim))
    matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    with atomic(store.conn):
        store.conn.executemany(
            "INSERT OR REPLACE INTO embeddings (model, text_hash, dim, vector, created_at_epoch)"
            " VALUES (?, ?, ?, ?, 0)",
            [
                (model.name, vectors.text_hash(t), model.dim, vectors.pack(matrix[i]))
                for i, t in enumerate(texts)
            ],
        )
    store.close()
    return {int(r["id"]): matrix[i] for i, r in enumerate(rows)}, rate


def _timed(calls: list[Any]) -> tuple[float, float]:
    for call in calls[:10]:
        call()
    samples = []
    for call in calls:
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), statistics.quantiles(samples, n=100)[94]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def inprocess(by_id: dict[int, Any], n: int, qs: list[str], fig: Any) -> list[Any]:
    """Build flat and HNSW in-process; time queries, filters and HNSW recall."""
    import numpy as np

    model = minilm()
    model.set_threads(1)
    ids = list(by_id)
    matrix = np.stack([by_id[i] for i in ids])
    qvecs = model.embed(qs)
    one = [lambda q=q: model.embed([q]) for q in qs]
    figures = [fig("query embedding minilm (1 thread)", n, *_timed(one))]
    built: dict[str, Any] = {}
    for kind in ("flat", "hnsw"):
        before = _rss_mb()
        started = time.perf_counter()
        index = vectors.VectorIndex(model.name, model.dim, kind)  # type: ignore[arg-type]
        for start in range(0, n, 10_000):
            index.add(ids[start : start + 10_000], ["h"] * len(ids[start : start + 10_000]),
                      matrix[start : start + 10_000])  # fmt: skip
        seconds = time.perf_counter() - started
        note = f"build {seconds:.1f} s, ~{index.memory_bytes() / 2**20:.0f} MB"
        note += f" (peak RSS +{_rss_mb() - before:.0f} MB)"
        calls = [lambda v=v, ix=index: ix.search(v, 20) for v in qvecs]
        figures.append(fig(f"in-process vector search {kind}", n, *_timed(calls), note))
        built[kind] = index
    exact = [{i for i, _ in built["flat"].search(v, 10)} for v in qvecs]
    approx = [{i for i, _ in built["hnsw"].search(v, 10)} for v in qvecs]
    recall = sum(len(a & e) for a, e in zip(approx, exact, strict=True)) / (10 * len(qvecs))
    figures[-1].note += f", recall@10 vs exact {recall:.3f}"

    # Filtered: a project-sized set (1/6 of rows) and a narrow one (0.5%).
    rng = np.random.default_rng(5)
    flat = built["flat"]
    for share in (1 / 6, 0.005):
        allowed = sorted(int(i) for i in rng.choice(ids, max(1, int(n * share)), replace=False))
        allowed_set = set(allowed)
        label = f"{share:.1%} allowed"
        calls = [lambda v=v, a=allowed: flat.search(v, 20, a) for v in qvecs]
        figures.append(fig(f"in-process filtered flat ({label})", n, *_timed(calls), "as shipped"))

        def post_filter(v: Any, allowed_set: set[int] = allowed_set) -> list[int]:
            k = 200
            while True:
                found = [i for i, _ in flat.search(v, k) if i in allowed_set][:20]
                if len(found) >= 20 or k >= n:
                    return found
                k *= 4

        calls = [lambda v=v: post_filter(v) for v in qvecs]
        figures.append(fig(f"  post-filter x oversample ({label})", n, *_timed(calls)))
        live = [i for i in allowed if i in flat._hashes]

        def selector(v: Any, live: list[int] = live) -> Any:
            faiss_mod = vectors._faiss()
            sel = faiss_mod.IDSelectorBatch(np.asarray(live, dtype=np.int64))
            return flat._index.search(v.reshape(1, -1), 20, params=flat._params(sel))

        calls = [lambda v=v: selector(v) for v in qvecs]
        figures.append(fig(f"  IDSelectorBatch always ({label})", n, *_timed(calls)))
    model.set_threads(2)
    return figures


def _http(port: int) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def get(path: str, **params: Any) -> Any:
        conn.request("GET", f"{path}?{urllib.parse.urlencode(params)}")
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200, body[:300]
        return json.loads(body) if "json" in response.getheader("content-type", "") else body

    return get


def through_http(data_dir: Path, n: int, qs: list[str], kind: str, fig: Any) -> list[Any]:
    from bench.search import free_port, start_service

    port = free_port()
    env_kind = {"WORKBENCH_VECTOR_INDEX": kind}
    started = time.perf_counter()
    proc = start_service_with(start_service, data_dir, port, env_kind)
    get = _http(port)
    try:
        while True:
            emb = get("/api/health")["embeddings"]
            if emb["state"] == "ready" and emb["pending"] == 0 and emb["indexed"] >= n:
                break
            if emb["state"] in ("unavailable", "disabled", "error"):
                raise SystemExit(f"embeddings {emb}")
            time.sleep(0.25)
        ready = time.perf_counter() - started
        status = get("/api/index/status")
        note = (
            f"service ready + index from cache in {ready:.1f} s, {status['memoryBytes'] >> 20} MB"
        )
        distinct = list(dict.fromkeys(qs))  # no query-embedding cache hits
        vec = [lambda q=q: get("/api/search", query=q, mode="vector") for q in distinct]
        figures = [fig(f"http vector ({kind})", n, *_timed(vec), note)]
        distinct2 = [f"{q} again" for q in distinct]
        hyb = [lambda q=q: get("/api/search", query=q) for q in distinct2]
        figures.append(fig(f"http hybrid ({kind})", n, *_timed(hyb), "fresh queries"))
        cached = [lambda q=q: get("/api/search", query=q) for q in distinct2]
        figures.append(fig(f"http hybrid ({kind}), repeated query", n, *_timed(cached)))
        probe = get("/api/search", query=distinct[0], format="json")
        assert probe["mode"] == "hybrid", probe
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return figures


def start_service_with(start: Any, data_dir: Path, port: int, extra: dict[str, str]) -> Any:
    """``bench.search.start_service`` with MiniLM and the index kind (via settings.json,
    because ``start_service`` drops every WORKBENCH_* variable from the environment)."""
    settings = data_dir / "settings.json"
    current = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    current["vector_index"] = extra["WORKBENCH_VECTOR_INDEX"]
    settings.write_text(json.dumps(current), encoding="utf-8")
    return start(data_dir, port, "minilm")


def vector_figures(
    data_dir: Path, n: int, qs: list[str], sample: int = 2000, fig: Any = None
) -> list[Any]:
    """Everything above for one seeded data dir; ``fig`` builds a ``bench.search.Figure``."""
    if fig is None:
        from bench.search import Figure as fig  # noqa: N813
    rng = random.Random(n)
    by_id, rate = seed_vectors(data_dir / "workbench.db", sample, rng)
    figures = [fig("embed minilm (2 threads)", n, 0.0, 0.0, f"{rate:.0f} texts/s")]
    figures += inprocess(by_id, n, qs, fig)
    for kind in ("flat", "hnsw"):
        figures += through_http(data_dir, n, qs, kind, fig)
    return figures


def main(argv: list[str] | None = None) -> int:
    from bench.search import print_table, queries, seed

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sample", type=int, default=2000)
    args = parser.parse_args(argv)
    figures: list[Any] = []
    seeding: dict[int, float] = {}
    for n in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(n)
        root = Path(tempfile.mkdtemp(prefix=f"wb-bench-vectors-{n}-"))
        data_dir = root / "data"
        data_dir.mkdir()
        seeding[n] = seed(data_dir / "workbench.db", n, rng)
        figures += vector_figures(data_dir, n, queries(args.queries, rng), args.sample)
        shutil.rmtree(root, ignore_errors=True)
    print_table(figures, seeding)
    return 0


if __name__ == "__main__":
    sys.exit(main())
