"""Does the vector prefilter keep the full scan's lists, and what does it save? Prints figures.

``workbench/recall/vector_prefilter.py`` scans 4-bit codes first and scores only their
candidates exactly (issue 21: the fp16 scan was the longest part of a hybrid search and of the
timeline's anchor at 100k). It is approximate in principle, so this measures, on a real store
(``--seeded``: a data dir whose saved ``fp16`` index holds a vector for every observation,
e.g. a ``bench/search.py --keep`` run's), read only:

1. building the codes: CPU seconds and bytes (the indexer thread pays it once per doubling);
2. per ``FACTOR`` (candidates per wanted hit) and per filter (none; the largest project; every
   project but the largest): the queries whose list differs from the full scan's, for the top
   10 and the top 50 (the fusion's depth), the first rank a list lost a hit at, and the scan's
   thread CPU p50 (ms) with and without the prefilter;
3. whether any hit's score differs from the full scan's score of that id (it must not).

Queries are ``bench.search`` texts embedded by the real MiniLM of this checkout, plus the
same count of stored vectors with noise (a query close to a memory, where scores crowd).

Figures, never assertions; the machine is shared (the load average is printed).

Usage: python bench/search_prefilter.py --seeded DIR [--queries 300] [--factor 20 --factor 40]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.search_index8 import cpu_p50, seeded_parser  # noqa: E402

DEPTH = 50  # the search's fusion depth (search.FUSION_DEPTH): the vector list fusion reads


def asked_vectors(args: argparse.Namespace, stored: Any) -> Any:
    """Real MiniLM queries, then stored vectors with noise (as many), unit length."""
    import numpy as np

    from bench.search import queries
    from workbench.recall.embed import load_embedder
    from workbench.settings import load_settings

    with tempfile.TemporaryDirectory(prefix="wb-bench-prefilter-") as work:
        embedder, why = load_embedder(load_settings(Path(work), embedder="minilm"))
        if embedder is None:
            raise SystemExit(f"MiniLM is not available: {why}")
        texts = queries(args.queries, random.Random(args.seed))
        real = np.asarray(embedder.embed(texts), dtype=np.float32)
    rng = np.random.default_rng(args.seed)
    rows = stored[rng.integers(0, len(stored), args.queries)]
    near = rows + 0.05 * rng.normal(size=rows.shape).astype(np.float32)
    both = np.vstack([real, near])
    return (both / np.linalg.norm(both, axis=1, keepdims=True)).astype(np.float32)


def run(args: argparse.Namespace) -> list[str]:
    import faiss

    from workbench.recall import vector_prefilter
    from workbench.recall.vectors import VectorIndex

    seeded = Path(args.seeded)
    found = sorted((seeded / "index").glob("observations.*.fp16.json"))
    if not found:
        raise SystemExit(f"no fp16 index under {seeded / 'index'}: start a service on it first")
    model = found[0].name.removeprefix("observations.").removesuffix(".fp16.json")
    dim = int(faiss.read_index(str(found[0].with_suffix(".faiss"))).d)
    loaded = [
        VectorIndex.load(seeded / "index", model, dim, "fp16", prefilter_from=start)[0]
        for start in (None, 0)
    ]
    exact, fast = loaded
    if exact is None or fast is None:
        raise SystemExit(f"the fp16 index under {seeded / 'index'} did not load")
    started = time.process_time()
    fast.prepare_prefilter()
    built = time.process_time() - started
    stored = exact._index.reconstruct_n(0, exact._index.ntotal)
    asked = asked_vectors(args, stored)
    sizes: dict[str, int] = {}
    for code in exact._codes.tolist():
        sizes[str(code)] = sizes.get(str(code), 0) + 1
    names = sorted(exact._projects, key=lambda p: -sizes.get(str(exact._projects[p]), 0))
    filters: list[tuple[str, list[str] | None]] = [("none", None)]
    if len(names) > 1:
        filters += [(f"largest project ({names[0]})", names[:1]), ("all but it", names[1:])]
    prefilter = fast._prefilter
    assert prefilter is not None
    lines = [
        f"{seeded}: {len(exact):,} vectors of {model}, {len(asked)} queries (half real MiniLM, "
        f"half stored + noise), load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
        "",
        f"1. codes built in {built:.2f} s CPU, {prefilter.memory_bytes() / 1e6:.1f} MB",
        "",
        "2-3. lists that differ from the full scan's (of all queries), first rank lost, "
        "scan CPU p50 ms (full → prefiltered), scores differing",
        f"{'factor':>6}  {'filter':28}{'top10':>7}{'top50':>7}  {'first lost':12}"
        f"{'full':>7}{'prefilt':>8}{'scores':>8}",
    ]
    for factor in args.factor:
        vector_prefilter.FACTOR = factor
        for label, projects in filters:
            differ10 = differ50 = scores = 0
            lost: list[int] = []
            for q in asked:
                truth, got = (
                    exact.search(q, DEPTH, projects=projects),
                    fast.search(q, DEPTH, projects=projects),
                )
                differ50 += got != truth
                differ10 += got[:10] != truth[:10]
                have = {i for i, _ in got}
                missing = [r for r, (i, _) in enumerate(truth, 1) if i not in have]
                lost += missing[:1]
                cosine = dict(exact.search(q, len(exact), projects=projects))
                scores += any(cosine.get(i) != s for i, s in got)
            full = cpu_p50(
                [lambda q=q, p=projects: exact.search(q, DEPTH, projects=p) for q in asked]
            )
            fastest = cpu_p50(
                [lambda q=q, p=projects: fast.search(q, DEPTH, projects=p) for q in asked]
            )
            first = ",".join(str(r) for r in sorted(lost)[:3]) or "-"
            lines.append(
                f"{factor:>6}  {label[:28]:28}{differ10:>7}{differ50:>7}  {first:12}"
                f"{full:>7.2f}{fastest:>8.2f}{scores:>8}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = seeded_parser(__doc__ or "", 37)
    parser.add_argument("--factor", type=int, action="append", help="candidates per hit")
    args = parser.parse_args(argv)
    args.factor = args.factor or [10, 20, 40]
    print("\n".join(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
