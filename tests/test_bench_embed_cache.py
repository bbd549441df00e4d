"""The benches' shared embedding cache: two benches saving side by side keep both their vectors.

Before, ``CachedEmbedder.save`` wrote only what its own process held, through one shared
temporary name: the second bench to finish erased the first one's vectors (and two saving at
once could rename each other's half-written file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench import relevance_sets


class Lengths:
    """A stand-in model for the cache's bookkeeping: a text's vector is its length, twice."""

    def embed(self, texts: list[str]) -> Any:
        return np.asarray([[len(t), len(t)] for t in texts], dtype=np.float32)


def test_two_benches_saving_in_turn_keep_both_their_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relevance_sets, "CACHE_DIR", tmp_path)
    first = relevance_sets.CachedEmbedder("lengths", 2, Lengths)
    second = relevance_sets.CachedEmbedder("lengths", 2, Lengths)  # opened before either saved
    first.embed(["alpha"])
    second.embed(["beta gamma"])
    first.save()
    second.save()

    again = relevance_sets.CachedEmbedder("lengths", 2, lambda: pytest.fail("a cache miss"))
    assert again.embed(["alpha", "beta gamma"]).tolist() == [[5.0, 5.0], [10.0, 10.0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lengths.npz"]  # no temporary left
