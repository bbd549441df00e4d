"""What a BERT-class cross-encoder would cost as hybrid's second stage, on this host. Prints it.

Issue 21 names "a cross-encoder ... measured at depth 30-50, its latency in the figures" as a
lever for recall. No PyPI package ships cross-encoder weights this service may load (stop 48's
survey: FlashRank and the rest download them at run time), so no trained one can be measured
here. Its price can be: a cross-encoder reads the query and each candidate together, one
encoder pass per (query, candidate) pair, where the shipped stage embeds the query once. The
common small ones (ms-marco-MiniLM-L-6-v2 and its L-2/L-4 cuts) have exactly MiniLM-L6's shape,
6 (or fewer) layers of 384 wide, so the shipped int8 MiniLM graph run over pairs costs what
such a model costs, to the weights' values.

For each layer count (``--layers``; 6 is the shipped build, fewer are ``onnx_export.build
(layers=)`` cuts under the embed_recall bench's variant dir) and depth (``--depths``), it runs
one batch of ``depth`` pairs, each ``[CLS] query [SEP] memory [SEP]`` long, through a
single-threaded ONNX Runtime session as the embedder opens it, and prints the median CPU ms
(``time.process_time``) of ``--repeats`` runs. The pair length comes from real memories:
the median token count (cut at the embedder's 128) of observations of ``--db`` (a seeded
store's ``workbench.db``), else ``--memory-tokens``. The last column is the stage's CPU
against the hybrid p50 target of 20 ms: the whole search's budget, before the first stage.
The first line is the query embedding hybrid already pays (one sequence of the query's tokens).

CPU, not wall: two lanes could split a batch between the two cores (wall ≈ CPU / 2 at best),
but a service serving searches has no idle core to give. Figures, never assertions.

What it printed (issue 21, stop 49; 2-core AMD EPYC, AVX2 without VNNI; ``--db`` the seeded
100k store, whose memories' median is 84 pieces, so pairs of 99): CPU ms per search

    layers   query   depth 10   depth 30   depth 50
         6     5.5      268.8      912.2     1373.5
         2     1.6       98.7      314.8      472.2
         1     1.1       56.4      115.7      237.4

(a first run, which counted each memory's [CLS] and [SEP] twice, pairs of 101: 6 layers 861 ms
at depth 30, 1 layer 140 ms: this host's speed drifts by that much between runs).

So even a one-layer cross-encoder at depth 30 costs ~6 times the whole search's 20 ms, and
MiniLM-L6's shape at depth 30 ~45 times. The lever is closed on cost on this class of host,
whatever its weights; the second stage stays late interaction (``rerank_maxsim``) and the
learned features.

Usage: .venv/bin/python bench/cross_encoder_cost.py [--db DIR/workbench.db] [--depths 10 30 50]
       [--layers 6 2 1] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embed_recall import ROWS8, model_dir  # noqa: E402
from bench.embed_student import store_texts  # noqa: E402

QUERY_TOKENS = 12  # a typical search's word pieces (the held-out questions' median is ~12)
BUDGET_MS = 20.0  # issue 21's hybrid p50 target, for the whole search


def memory_tokens(database: Path, count: int = 2000) -> int:
    """The median word-piece count of ``count`` observations' embedded texts as the embedder
    reads them (cut at its 128 with ``cut_ids``), less its [CLS] and [SEP]: a pair adds its
    own three special tokens around the query's and the memory's pieces."""
    from workbench.recall.embed import ONNX_MAX_TOKENS, cut_ids, minilm_dir, shared_tokenizer

    texts = store_texts(database, count)
    if not texts:
        sys.exit(f"no observations in {database}")
    encoded = shared_tokenizer(minilm_dir() / "tokenizer.json").encode_batch(texts)
    return int(statistics.median(len(cut_ids(e.ids, ONNX_MAX_TOKENS)) - 2 for e in encoded))


def model_path(layers: int) -> Path:
    """The shipped int8 build for 6 layers; a cut of its first ``layers`` layers otherwise."""
    from workbench.recall.onnx_export import MODEL_FILE, onnx_model_dir

    where = onnx_model_dir() if layers == 6 else model_dir(ROWS8, layers)
    return where / MODEL_FILE


def cpu_ms(session: Any, rows: int, tokens: int, repeats: int) -> float:
    """Median CPU ms of one run over a ``rows`` × ``tokens`` batch (word pieces drawn at
    random from the vocabulary's ordinary range; the cost does not depend on which)."""
    import numpy as np

    ids = np.random.default_rng(0).integers(1000, 29000, size=(rows, tokens), dtype=np.int64)
    feed = {
        "input_ids": ids,
        "attention_mask": np.ones_like(ids),
        "token_type_ids": np.zeros_like(ids),
    }
    session.run(None, feed)  # the first run allocates
    spent = []
    for _ in range(repeats):
        started = time.process_time()
        session.run(None, feed)
        spent.append((time.process_time() - started) * 1000)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", type=Path, help="a store whose memories give the pair length")
    parser.add_argument("--memory-tokens", type=int, default=40, help="without --db")
    parser.add_argument("--depths", type=int, nargs="+", default=[10, 30, 50])
    parser.add_argument("--layers", type=int, nargs="+", default=[6, 2, 1])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    from workbench.recall.embed import onnx_session

    memory = memory_tokens(args.db) if args.db else args.memory_tokens
    pair = QUERY_TOKENS + memory + 3  # [CLS] query [SEP] memory [SEP]
    source = f"median of {args.db}" if args.db else "given"
    print(f"pairs of {pair} word pieces: query {QUERY_TOKENS} + memory {memory} ({source}) + 3")
    print("CPU ms per search, one thread; × budget: against the whole hybrid p50 target")
    print(f"{'layers':>6} {'depth':>6} {'CPU ms':>9} {'× budget':>9}")
    for layers in args.layers:
        session = onnx_session(model_path(layers))
        query = cpu_ms(session, 1, QUERY_TOKENS + 2, args.repeats)
        print(f"{layers:>6} {'query':>6} {query:>9.1f} {query / BUDGET_MS:>9.2f}", flush=True)
        for depth in args.depths:
            spent = cpu_ms(session, depth, pair, args.repeats)
            print(f"{layers:>6} {depth:>6} {spent:>9.1f} {spent / BUDGET_MS:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
