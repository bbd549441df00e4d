"""What the embedding worker feeds MiniLM: tokens per text, the cut's share, padding waste.

Issue 21: MiniLM costs ~16 CPU-minutes per 100k texts on this machine, and its cost grows
with the positions fed (real tokens plus padding). This prints, per corpus (the demo memory
the catch-up benches import, and every relevance set of ``bench/relevance_sets.py``), the
token count of ``vectors.embed_text`` per memory with [CLS]/[SEP], uncut: mean and
percentiles, the share over 64 / 96 / 128 tokens, and the tokens a cut at 64 / 96 / 128 keeps
(of all, uncut). Then, for demo-shaped texts in the worker's order (chunks of 256 rows), the
positions fed per real token when batches are formed by characters (the embedder before
issue 21's stop 31) or by tokens (now), per batch size. Tokenizer only: no model runs.

Usage: python bench/embed_lengths.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import relevance_sets  # noqa: E402
from bench.embed_backfill import document  # noqa: E402
from workbench.recall import vectors  # noqa: E402

CUTS = (64, 96, 128)
CHUNK = 256  # embed_worker.CHUNK: rows read (and sorted) together


def lengths(texts: Sequence[str]) -> list[int]:
    from tokenizers import Tokenizer

    from workbench.recall.onnx_export import TOKENIZER_FILE, onnx_model_dir

    tokenizer = Tokenizer.from_file(str(onnx_model_dir() / TOKENIZER_FILE))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]


def describe(name: str, lens: Sequence[int]) -> str:
    import numpy as np

    a = np.asarray(lens)
    q = "/".join(str(int(x)) for x in np.percentile(a, [10, 50, 90, 99]))
    over = " ".join(f">{c} {np.mean(a > c):.2f}" for c in CUTS)
    kept = "/".join(f"{np.minimum(a, c).sum() / a.sum():.2f}" for c in CUTS)
    return f"{name:14s}{len(a):7d}{a.mean():7.1f}  {q:>16s}  {over}  {kept}"


def fed_per_token(lens: Sequence[int], key: Callable[[int], int], batch: int, cut: int) -> float:
    """Positions fed (each batch padded to its longest) per real token, after the cut."""
    real = padded = 0
    cuts = [min(n, cut) for n in lens]
    for first in range(0, len(cuts), CHUNK):
        order = sorted(range(first, min(first + CHUNK, len(cuts))), key=key)
        for start in range(0, len(order), batch):
            part = [cuts[i] for i in order[start : start + batch]]
            real += sum(part)
            padded += max(part) * len(part)
    return padded / real


def main() -> None:
    print("tokens per memory ([CLS]/[SEP] included, uncut)")
    print(
        f"{'corpus':14s}{'texts':>7s}{'mean':>7s}  {'p10/50/90/99':>16s}  share over a cut"
        "              tokens kept at 64/96/128"
    )
    demo = [vectors.embed_text(o) for o in document(4096)["observations"]]
    demo_lens = lengths(demo)
    print(describe("demo", demo_lens[:339]))
    for name in relevance_sets.available_sets():
        items, _ = relevance_sets._drafts(name)
        print(describe(name, lengths([vectors.embed_text(d) for d, *_ in items])))
    print("\npositions fed per real token, demo texts (4096, cut 128), by batch size")
    print(f"{'batch':>6s}{'by chars':>10s}{'by tokens':>11s}")
    for batch in (4, 8, 16, 32):
        chars = fed_per_token(demo_lens, lambda i: len(demo[i]), batch, 128)
        tokens = fed_per_token(demo_lens, lambda i: demo_lens[i], batch, 128)
        print(f"{batch:6d}{chars:10.3f}{tokens:11.3f}")


if __name__ == "__main__":
    main()
