"""Would an 8-bit vector index with exact rescoring keep every reply and cost less? Prints figures.

Issue 21's search path at 100k with full vectors spends ~4-5 ms of a hybrid search (and of
the timeline's anchor) scanning the fp16 index (``bench/search_stages.py``). The lever
proposed in stop 29's note: scan 8-bit codes (half the bytes, ~38 MB less RSS) and rescore
the top candidates exactly, so that the replies stay byte for byte those of ``fp16``. This
script measures each condition that lever needs, on a real store (``--seeded``: a data dir
with a vector for every observation, e.g. a ``bench/search.py --keep`` run's), read only:

1. **Scan cost** (thread CPU, p50): ``fp16`` top 50 (today's default, the search's fusion
   depth) against FAISS's two 8-bit scalar quantisers, ``QT_8bit`` (today's ``sq8`` kind: a
   range per dimension) and ``QT_8bit_uniform`` (one range), each for the top K candidates.
2. **Same top k**: for how many queries the fp16 index's top 50 is not inside the 8-bit
   index's top K (then a reply would change). Queries are ``bench.search`` texts embedded by
   the real MiniLM of this checkout (not perturbed stored vectors: a query sits farther
   from every memory, where scores crowd).
3. **Where the exact vectors come from**, per 100 candidates: the embeddings cache in
   SQLite (``vectors.cached_vectors``, one query), or a flat file of fp16 rows read with
   ``os.pread`` (a file the index would have to keep beside itself).
4. **Same scores**: fp16's scores must come back bit for bit (the reply prints 6 digits of a
   fused score). Rescoring the candidates in a small fp16 FAISS index gives the full scan's
   scores exactly; the filtered path (``VectorIndex._score_slots``, a numpy product over
   every allowed slot) does not give a row's score from a matrix of fewer rows (BLAS
   splits the rows), and ``astype(float16)`` is not FAISS's own fp16 encoding: both are
   counted.

Figures, never assertions; the machine is shared (the load average is printed).

Usage: python bench/search_index8.py --seeded DIR [--queries 300] [--seed 21]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEPTH = 50  # the search's fusion depth (search.FUSION_DEPTH): the vector list fusion reads
CANDIDATES = (50, 75, 100, 200)


def cpu_p50(calls: list[Callable[[], object]]) -> float:
    """Median thread CPU of each call, in ms."""
    spent = []
    for call in calls:
        started = time.thread_time()
        call()
        spent.append(time.thread_time() - started)
    return statistics.median(spent) * 1000


def quantised(faiss: Any, np: Any, kind: int, vectors: Any) -> Any:
    """An 8-bit index over ``vectors`` with the fixed [-1, 1] range ``vectors._make`` uses."""
    dim = vectors.shape[1]
    index = faiss.IndexScalarQuantizer(dim, kind, faiss.METRIC_INNER_PRODUCT)
    index.train(np.stack([-np.ones(dim), np.ones(dim)]).astype(np.float32))
    index.add(vectors)
    return index


def run(args: argparse.Namespace) -> list[str]:
    import faiss
    import numpy as np

    from bench.search import queries
    from workbench.recall import vectors
    from workbench.recall.embed import load_embedder
    from workbench.settings import load_settings

    faiss.omp_set_num_threads(1)  # as the service scans (vectors._faiss)
    seeded = Path(args.seeded)
    found = sorted((seeded / "index").glob("observations.*.fp16.faiss"))
    if not found:
        raise SystemExit(f"no fp16 index under {seeded / 'index'}: start a service on it first")
    fp16 = faiss.read_index(str(found[0]))
    model = found[0].name.removeprefix("observations.").removesuffix(".fp16.faiss")
    stored = fp16.reconstruct_n(0, fp16.ntotal)  # fp16-decoded: what the scan sees
    with tempfile.TemporaryDirectory(prefix="wb-bench-index8-") as work:
        embedder, _ = load_embedder(load_settings(Path(work), embedder="minilm"))
        assert embedder is not None
        texts = queries(args.queries, random.Random(args.seed))
        asked = np.asarray(embedder.embed(texts), dtype=np.float32)
    lines = [
        f"{seeded}: {fp16.ntotal:,} vectors of {model}, {len(texts)} MiniLM queries, load "
        f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (the box is shared)",
        "",
        "1-2. scan CPU p50 (ms) and queries whose fp16 top 50 is not inside the top K",
    ]
    scan = cpu_p50([lambda q=q: fp16.search(q[None], DEPTH) for q in asked])
    lines.append(f"  fp16, top {DEPTH:<4}{scan:>8.2f}")
    truth = [set(fp16.search(q[None], DEPTH)[1][0].tolist()) for q in asked]
    for name, kind in (
        ("QT_8bit (sq8)", faiss.ScalarQuantizer.QT_8bit),
        ("QT_8bit_uniform", faiss.ScalarQuantizer.QT_8bit_uniform),
    ):
        index = quantised(faiss, np, kind, stored)
        for k in CANDIDATES:
            took = cpu_p50([lambda q=q, i=index, k=k: i.search(q[None], k) for q in asked])
            missed = sum(
                bool(want - set(index.search(q[None], k)[1][0].tolist()))
                for q, want in zip(asked, truth, strict=True)
            )
            lines.append(f"  {name}, top {k:<4}{took:>8.2f}   missed {missed} of {len(asked)}")
    lines += ["", "3. the exact vectors of 100 candidates (CPU p50, ms)"]
    uri = f"file:{seeded / 'workbench.db'}?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True)
    hashes = [
        str(r[0])
        for r in conn.execute("SELECT text_hash FROM embeddings WHERE model = ?", (model,))
    ]
    rng = random.Random(args.seed)
    picks = [rng.sample(hashes, 100) for _ in range(100)] if len(hashes) >= 100 else []
    if picks:
        took = cpu_p50([lambda p=p: vectors.cached_vectors(conn, model, p, fp16.d) for p in picks])
        lines.append(f"  SQLite embeddings cache (one query){took:>12.2f}")
    else:
        lines.append(f"  SQLite embeddings cache: only {len(hashes)} rows of {model}")
    exact = list(vectors.cached_vectors(conn, model, hashes[:1000], fp16.d).values())
    conn.close()
    row = fp16.d * 2
    with tempfile.TemporaryFile() as rows:
        rows.write(faiss.vector_to_array(fp16.codes).tobytes())
        rows.flush()
        fd = rows.fileno()
        slots = [[rng.randrange(fp16.ntotal) for _ in range(100)] for _ in range(100)]

        def read(chosen: list[int]) -> Any:
            data = b"".join(os.pread(fd, row, s * row) for s in chosen)
            return np.frombuffer(data, dtype=np.float16).reshape(-1, fp16.d).astype(np.float32)

        took = cpu_p50([lambda s=s: read(s) for s in slots])
        lines.append(f"  fp16 rows file, os.pread per row  {took:>12.2f}")
    lines += ["", "4. fp16's own scores, bit for bit (queries with any difference)"]
    small_differs = 0
    numpy_differs = 0
    for q in asked:
        scores, ids = fp16.search(q[None], DEPTH)
        small = faiss.IndexScalarQuantizer(
            fp16.d, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        small.add(stored[ids[0]])
        again, where = small.search(q[None], DEPTH)
        got = dict(zip(ids[0][where[0]].tolist(), again[0].tolist(), strict=True))
        small_differs += got != dict(zip(ids[0].tolist(), scores[0].tolist(), strict=True))
        subset = np.sort(rng.sample(range(fp16.ntotal), 2000))
        whole = fp16.reconstruct_batch(subset) @ q
        part = fp16.reconstruct_batch(subset[:DEPTH]) @ q
        numpy_differs += not np.array_equal(whole[:DEPTH], part)
    originals = np.asarray(exact, dtype=np.float32).reshape(-1, fp16.d)
    theirs = faiss.IndexScalarQuantizer(
        fp16.d, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
    )
    theirs.add(originals)
    ours = originals.astype(np.float16).astype(np.float32)
    same_codes = np.array_equal(ours, theirs.reconstruct_n(0, len(originals)))
    lines.append(
        f"  candidates rescored in a small fp16 FAISS index   {small_differs} of {len(asked)}"
    )
    lines.append(
        f"  numpy: 50 rows alone vs inside 2,000 allowed rows {numpy_differs} of {len(asked)}"
    )
    lines.append(
        f"  numpy astype(float16) of {len(originals)} cached fp32 vectors equals FAISS's fp16"
        f" codes: {bool(same_codes)}"
    )
    return lines


def seeded_parser(doc: str, seed: int) -> argparse.ArgumentParser:
    """The options of a bench that reads a seeded 100k store: ``--seeded``, ``--queries``,
    ``--seed`` (this one's and ``search_prefilter``'s)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--seeded", required=True, help="a data dir with full vectors (read only)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=seed)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = seeded_parser(__doc__ or "", 21).parse_args(argv)
    print("\n".join(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
