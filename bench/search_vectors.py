"""Vector figures for ``bench/search.py`` (its ``vector_figures`` slot), or on their own.

Two parts, before (``git show <--before>:workbench/recall/vectors.py``, main's flat and HNSW)
and after (this tree's kinds) side by side in one run.

"Before" is ``--before`` (default: the commit where this branch left main, so its service
opens the same store). Figures print at the end, even when a later part fails.

1. **Growth, in-process** (``--growth 10000,100000,1000000``): synthetic clustered 384-d
   vectors (real MiniLM embeddings of bench texts as centres, plus noise, re-normalised:
   clustered like real data, which approximate indexes must be measured on). Per size and
   kind: build time, RSS growth and the index's own estimate, p50/p95 of one top-20 search
   (quantised kinds include their exact rescoring, read from a real SQLite embeddings
   cache), recall@10 against exact, and a project filter (1/6 and 0.5% of rows) by the
   index's slot → project array vs main's id-list path. HNSW kinds stop at ``--hnsw-max``
   (their build is ~30 s per 100k on one core).
2. **Through HTTP** (``--sizes``): the real service on a seeded store whose embeddings cache
   holds a clustered vector per observation (MiniLM texts/s measured on a sample), for each
   kind in ``--http-kinds`` and main's own service (``--before``, extracted by ``git
   archive``): vector, hybrid and full-text p50/p95 for queries new to the process, and the
   service's RSS. The query embedding (MiniLM via torch here) is timed on its own, so the
   vector-search part and the query-embedding part can be combined with another embedder.

Usage: python bench/search_vectors.py [--growth 10000,100000,1000000] [--sizes 100000]
       [--queries 200] [--before <git ref>] [--http-kinds fp16,hnsw_fp16] [--skip-http]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, module_at, progress, start_service, stop_service, tree_at  # noqa: E402
from workbench.recall import vectors  # noqa: E402
from workbench.store.connection import atomic  # noqa: E402
from workbench.store.database import Store  # noqa: E402

NOISE = 0.25
_MODEL: Any = None


def minilm() -> Any:
    global _MODEL
    if _MODEL is None:
        # The runtime the service will use (ONNX int8 when built), so the cached vectors
        # carry the model name the service looks them up by.
        from workbench.recall.embed import load_minilm
        from workbench.settings import Settings

        _MODEL, _ = load_minilm(Settings(embedder="minilm"), threads=2)
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


def _cpu_fig(fig: Any, label: str, n: int, calls: list[Any], note: str = "") -> Any:
    """A figure with wall and CPU time: the CPU column holds up when others load the machine."""
    for call in calls[:10]:
        call()
    wall, cpu = [], []
    for call in calls:
        started, started_cpu = time.perf_counter(), time.process_time()
        call()
        cpu.append((time.process_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    figure = fig(label, n, statistics.median(wall), statistics.quantiles(wall, n=100)[94], note)
    figure.cpu_p50_ms = statistics.median(cpu)
    figure.cpu_p95_ms = statistics.quantiles(cpu, n=100)[94]
    return figure


def _rss_mb(pid: int | str = "self") -> float:
    """Resident memory now (not the peak): VmRSS from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def before_module(ref: str) -> Any:
    """Main's ``vectors`` module (``git show ref:…``), imported under another name."""
    return module_at(ref, "workbench/recall/vectors.py", "vectors_before")


# ----- 1. growth, in-process ------------------------------------------------------------------
def synthetic(n: int, centres: Any, seed: int = 7) -> Any:
    """``n`` clustered unit vectors around ``centres`` (float32, built in chunks)."""
    import numpy as np

    gen = np.random.default_rng(seed)
    out = np.empty((n, centres.shape[1]), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        chunk = centres[gen.integers(0, len(centres), m)] + NOISE / np.sqrt(
            centres.shape[1]
        ) * gen.normal(size=(m, centres.shape[1]))
        out[start : start + m] = chunk / np.linalg.norm(chunk, axis=1, keepdims=True)
    return out


def exact_cache(path: Path, model: str, matrix: Any) -> Any:
    """A real SQLite embeddings cache of ``matrix`` (hash ``h<id>``); return its reader."""
    import sqlite3

    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute(
        "CREATE TABLE embeddings (model TEXT NOT NULL, text_hash TEXT NOT NULL, dim INTEGER"
        " NOT NULL, vector BLOB NOT NULL, created_at_epoch INTEGER NOT NULL,"
        " PRIMARY KEY (model, text_hash)) WITHOUT ROWID"
    )
    dim = matrix.shape[1]
    for start in range(0, len(matrix), 50_000):
        rows = [
            (model, f"h{start + i + 1}", dim, matrix[start + i].tobytes(), 0)
            for i in range(min(50_000, len(matrix) - start))
        ]
        conn.executemany("INSERT INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
        conn.commit()

    def read(hashes: list[str]) -> dict[str, Any]:
        return vectors.cached_vectors(conn, model, hashes)

    return read


def growth(
    sizes: list[int], qvecs: Any, centres: Any, before: Any, hnsw_max: int, fig: Any
) -> list[Any]:
    import gc

    import numpy as np

    figures = []
    kinds = [("before", "flat"), ("before", "hnsw"), *(("after", k) for k in vectors.KINDS)]
    workdir = Path(tempfile.mkdtemp(prefix="wb-bench-growth-"))
    for n in sizes:
        progress(f"growth: {n:,} synthetic vectors")
        matrix = synthetic(n, centres)
        ids = np.arange(1, n + 1, dtype=np.int64)
        # Projects: "wide" holds 1/6 of rows, "narrow" 0.5%, the rest are spread over others.
        codes = np.arange(n) % 200
        names = np.where(codes < 33, "wide", np.where(codes == 33, "narrow", "other"))
        exact_ids = [set((matrix @ q).argsort()[::-1][:10] + 1) for q in qvecs]
        started = time.perf_counter()
        exact = exact_cache(workdir / f"cache-{n}.db", "bench", matrix)
        progress(f"  embeddings cache of {n:,} in {time.perf_counter() - started:.0f} s")
        picks = [np.random.default_rng(s).integers(1, n + 1, 100) for s in range(len(qvecs))]
        reads = [lambda p=p, ex=exact: ex([f"h{i}" for i in p]) for p in picks]
        figures.append(_cpu_fig(fig, "  exact source: sqlite, 100 rows by hash", n, reads))
        for side, kind in kinds:
            if "hnsw" in kind and n > hnsw_max:
                continue
            label = f"{side} {kind}"
            progress(f"  {label}")
            gc.collect()
            rss = _rss_mb()
            started = time.perf_counter()
            module = before if side == "before" else vectors
            index = module.VectorIndex("bench", matrix.shape[1], kind)
            for start in range(0, n, 10_000):
                part = slice(start, start + 10_000)
                hashes = [f"h{i}" for i in ids[part]]
                if side == "before":
                    index.add(ids[part].tolist(), hashes, matrix[part])
                else:
                    index.add(
                        ids[part].tolist(), hashes, matrix[part], projects=names[part].tolist()
                    )
            build = time.perf_counter() - started
            grown = _rss_mb() - rss
            kw = {"exact": exact} if side == "after" else {}
            found = [index.search(q, 20, **kw) for q in qvecs]
            recall = sum(
                len({i for i, _ in f[:10]} & e) for f, e in zip(found, exact_ids, strict=True)
            ) / (10 * len(qvecs))
            note = (
                f"build {build:.1f} s, RSS +{grown:.0f} MB (est. {index.memory_bytes() >> 20} MB),"
                f" recall@10 {recall:.3f}"
            )
            calls = [lambda q=q, ix=index, kw=kw: ix.search(q, 20, **kw) for q in qvecs]
            figures.append(_cpu_fig(fig, f"vector {label}", n, calls, note))
            for project in ("wide", "narrow"):
                if side == "before":
                    members = ids[names == project].tolist()  # what search.py collected by SQL
                    calls = [lambda q=q, m=members, ix=index: ix.search(q, 20, m) for q in qvecs]
                    how = "id list (+ the SQL that collected it, not timed)"
                else:
                    calls = [
                        lambda q=q, p=project, ix=index, ex=exact: ix.search(
                            q, 20, projects=[p], exact=ex
                        )
                        for q in qvecs
                    ]
                    how = "slot → project array"
                share = "1/6" if project == "wide" else "0.5%"
                figures.append(_cpu_fig(fig, f"  {label} in a project of {share}", n, calls, how))
            del index, found
        del matrix
    shutil.rmtree(workdir, ignore_errors=True)
    return figures


# ----- 2. through HTTP ------------------------------------------------------------------------
def _http(port: int) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def get(path: str, **params: Any) -> Any:
        conn.request("GET", f"{path}?{urllib.parse.urlencode(params)}")
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200, body[:300]
        return json.loads(body) if "json" in response.getheader("content-type", "") else body

    return get


def start_indexed_service(root: Path, data_dir: Path, port: int, kind: str) -> Any:
    """The real service from ``root`` (this tree, or main's extracted by ``git archive``)."""
    settings = data_dir / "settings.json"
    current = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    current["vector_index"] = kind
    settings.write_text(json.dumps(current), encoding="utf-8")
    for stale in data_dir.glob("index/*"):  # each run builds its index from the cache
        stale.unlink()
    return start_service(
        data_dir,
        port,
        root=root,
        wait_s=180.0,
        WORKBENCH_COMPRESSOR="offline",
        WORKBENCH_EMBEDDER="minilm",
    )


def through_http(
    root: Path, label: str, data_dir: Path, n: int, qs: list[str], kind: str, fig: Any
) -> list[Any]:
    from bench.search import PROJECTS

    port = free_port()
    started = time.perf_counter()
    progress(f"http: {label} at {n:,}")
    proc = start_indexed_service(root, data_dir, port, kind)
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
        note = f"ready + index from cache in {ready:.0f} s, index ~{status['memoryBytes'] >> 20} MB"
        distinct = list(dict.fromkeys(qs))  # no query-embedding cache hits
        tag = f"{label} [{root.name}]" if label.startswith("before") else label
        vec = [lambda q=q: get("/api/search", query=q, mode="vector") for q in distinct]
        figures = [fig(f"http vector {tag}", n, *_timed(vec), note)]
        hyb = [lambda q=q: get("/api/search", query=f"{q} again") for q in distinct]
        figures.append(fig(f"http hybrid {tag}", n, *_timed(hyb), "fresh queries"))
        proj = [
            lambda q=q: get("/api/search", query=f"{q} in project", project=PROJECTS[1])
            for q in distinct
        ]
        figures.append(fig(f"http hybrid in a project {tag}", n, *_timed(proj), "fresh queries"))
        text = [lambda q=q: get("/api/search", query=f"{q} text", mode="fts") for q in distinct]
        rss = _rss_mb(proc.pid)
        # Children are listed per thread, and the worker is started by the indexer thread.
        tasks = Path(f"/proc/{proc.pid}/task").glob("*/children")
        kids = [k for t in tasks for k in t.read_text(encoding="utf-8").split()]
        worker = sum(_rss_mb(k) for k in kids)  # the embedding worker, when there is one
        note = f"service RSS {rss:.0f} MB" + (f" + worker {worker:.0f} MB" if kids else "")
        figures.append(fig(f"http fts {tag}", n, *_timed(text), note))
        probe = get("/api/search", query=distinct[0], format="json")
        assert probe["mode"] == "hybrid", probe
    finally:
        stop_service(proc, timeout=60)
    return figures


def query_embedding(qs: list[str], n: int, fig: Any) -> Any:
    model = minilm()
    model.set_threads(1)
    one = [lambda q=q: model.embed([q]) for q in qs]
    figure = fig(f"query embedding {model.name} (1 thread)", n, *_timed(one), "part of hybrid")
    model.set_threads(2)
    return figure


def vector_figures(
    data_dir: Path,
    n: int,
    qs: list[str],
    sample: int = 2000,
    fig: Any = None,
    kinds: tuple[str, ...] = ("fp16", "hnsw_fp16"),
    before: str | None = None,
) -> list[Any]:
    """Part 2 for one seeded data dir; ``fig`` builds a ``bench.search.Figure``."""
    if fig is None:
        from bench.search import Figure as fig  # noqa: N813
    rng = random.Random(n)
    _, rate = seed_vectors(data_dir / "workbench.db", sample, rng)
    figures = [fig("embed minilm (2 threads)", n, 0.0, 0.0, f"{rate:.0f} texts/s")]
    figures.append(query_embedding(qs, n, fig))
    runs = [(ROOT, f"after {kind}", kind) for kind in kinds]
    old = tree_at(before) if before else None
    if old is not None:
        runs = [(old, f"before {kind}", kind) for kind in ("flat", "hnsw")] + runs
    for root, label, kind in runs:
        try:
            figures += through_http(root, label, data_dir, n, qs, kind, fig)
        except (SystemExit, OSError, AssertionError) as exc:  # keep the other runs' figures
            figures.append(fig(f"http {label}", n, 0.0, 0.0, f"FAILED: {exc}"))
    if old is not None:
        shutil.rmtree(old.parent, ignore_errors=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    from bench.search import print_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--growth", default="10000,100000,1000000")
    parser.add_argument("--hnsw-max", type=int, default=100_000)
    parser.add_argument("--sizes", default="100000", help="store sizes for the HTTP part")
    parser.add_argument("--http-kinds", default="fp16,hnsw_fp16")
    parser.add_argument(
        "--before",
        default="merge-base",
        help="git ref measured as 'before' (default: where this branch left main, whose"
        " schema this tree can open)",
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-growth", action="store_true")
    args = parser.parse_args(argv)
    if args.before == "merge-base":
        args.before = subprocess.run(
            ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()[:12]
    progress(f"before = {args.before}")
    figures: list[Any] = []
    seeding: dict[int, float] = {}
    try:
        measure(args, figures, seeding)
    finally:  # a failure late in a long run still shows what was measured
        print_table(figures, seeding)
        print(f"before = {args.before} (git ref)")
    return 0


def measure(args: Any, figures: list[Any], seeding: dict[int, float]) -> None:
    from bench.search import Figure, queries, seed

    if not args.skip_growth:
        rng = random.Random(1)
        model = minilm()
        texts = queries(args.sample, rng)
        centres = model.embed(texts)
        qvecs = model.embed(queries(args.queries, random.Random(2)))
        growth_sizes = [int(s) for s in args.growth.split(",")]
        figures += growth(
            growth_sizes, qvecs, centres, before_module(args.before), args.hnsw_max, Figure
        )
    if not args.skip_http:
        for n in (int(s) for s in args.sizes.split(",")):
            rng = random.Random(n)
            root = Path(tempfile.mkdtemp(prefix=f"wb-bench-vectors-{n}-"))
            data_dir = root / "data"
            data_dir.mkdir()
            seeding[n] = seed(data_dir / "workbench.db", n, rng)
            figures += vector_figures(
                data_dir,
                n,
                queries(args.queries, rng),
                args.sample,
                Figure,
                tuple(args.http_kinds.split(",")),
                args.before or None,
            )
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
