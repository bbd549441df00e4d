"""A coarse first pass for the exact vector scan: 4-bit product-quantised codes of every slot,
scanned with FAISS's fast-scan kernels, pick a few thousand candidate slots; the exact index
(``fp16`` or ``flat``) then scores only those.

Why: at 100k MiniLM vectors the exact ``fp16`` scan reads 77 MB per query and is bound by
memory bandwidth: ~5 ms alone, ~8.5 ms in the service while the full-text side runs beside it
(``bench/search_stages.py``), the longest part of a hybrid search and of the timeline's anchor
(issue 21: timeline by query ≤ 10 ms). These codes are 96 bytes per vector (dim / 2
sub-quantisers of 4 bits: 9.6 MB at 100k) and their scan costs ~0.5 ms for 1,000 candidates.

Same scores: the exact index scores the candidates through its own scan, restricted to them by
an ``IDSelectorBitmap``, so every score is the one the full scan gives, bit for bit (the same
kernel; measured: 0 of 500 queries differ). Same list, as measured: the first pass is
approximate, so a vector of the exact top k could in principle be left out of the candidates.
``bench/search_prefilter.py`` measures how often: at 100k (a ``bench/search.py`` store, many
near-duplicates), none of 300 real MiniLM queries and 300 stored vectors with noise lost a hit
of its exact top 50, unfiltered or filtered to two thirds of the memory; over 3,000 noisier
queries 3 lost one hit, at ranks 40-49 (a fused page reads the top few). ``FACTOR``
candidates per wanted hit, more when a filter keeps only a share of the slots; a search that
would need more than ``MOST_SHARE`` of the slots scans them all.

Codebooks come from the vectors themselves (FAISS k-means, seeded: the same vectors give the
same codes), trained on a sample of at most ``TRAIN_SAMPLE`` live vectors as the scan sees
them (fp16-decoded): ~1 s of CPU, plus ~8 µs per vector to encode. They are built by the
indexer thread (``VectorIndex.prepare_prefilter``) from ``settings.vector_prefilter_from``
live vectors (never below ``MIN_VECTORS``), again when the index has grown
``RETRAIN_GROWTH``-fold since (new topics), and dropped by a compaction (slots renumbered);
never while the embedding worker embeds (``Indexer._prepare_prefilter``: a catch-up needs the
CPU more). Not saved: derived from the saved index in ~2 s.

Costs, at 100k (``bench/search.py``, ``bench/vectors_catch_up.py``): ~10 MiB of the service's
RSS (the codes, and FAISS's fast-scan kernels paged in), ~2 s of CPU per build.
"""

from __future__ import annotations

import math
from typing import Any

# Candidates per wanted hit. 20: at 100k, 300 real MiniLM queries lost none of the exact top
# 50 (10 queries lost one of their top 20 with 96 sub-quantisers; with dim / 2, none at 20
# or 40: bench/search_prefilter.py).
FACTOR = 20
# Past this share of the slots the first pass saves little: scan them all.
MOST_SHARE = 0.125
# A filter keeping less than this share of the slots: the candidates would be mostly
# filtered out (and the filtered scan is cheaper anyway): scan exactly.
MIN_SHARE = 0.2
# Never built for fewer live vectors, whatever the setting: k-means wants ~40 points per
# centroid (16 per sub-quantiser), and below this the full scan costs microseconds.
MIN_VECTORS = 1024
TRAIN_SAMPLE = 10_000  # 5k, 10k and 20k lost nothing at 100k; 10k trains in ~1 s
RETRAIN_GROWTH = 2.0
CHUNK = 2048  # vectors decoded at a time while the codes are built (~3 MB of scratch)
SEED = 21


def supported(dim: int) -> bool:
    """Two dimensions per sub-quantiser: the fast-scan kernels need an even ``dim``."""
    return dim >= 2 and dim % 2 == 0


def wanted(k: int, share: float, total: int) -> int | None:
    """How many candidates a top ``k`` over ``share`` of ``total`` slots needs; None when the
    exact scan of them all is the better choice."""
    if share < MIN_SHARE or k <= 0:
        return None
    # Once for the depth: a filter's top k sits ~k / share deep in the whole ranking, where
    # the codes' order errs more; once for the candidates the filter drops.
    want = math.ceil(FACTOR * k / share**2)
    return want if want <= MOST_SHARE * total else None


class Prefilter:
    """4-bit fast-scan codes over the slots of one FAISS index, in slot order."""

    def __init__(self, dim: int) -> None:
        import faiss

        if not supported(dim):
            raise ValueError(f"a prefilter needs an even dimension, not {dim}")
        self.dim = dim
        self._codes = faiss.IndexPQFastScan(dim, dim // 2, 4, faiss.METRIC_INNER_PRODUCT)
        self.trained_on = 0  # slots the index held when the codebooks were trained

    @classmethod
    def build(cls, index: Any, count: int, live: Any) -> Prefilter:
        """Codes for the first ``count`` slots of ``index``, codebooks from its ``live`` slots.

        ``index`` is read only (the caller is the index's one mutator, or holds its lock).
        """
        import numpy as np

        made = cls(int(index.d))
        slots = np.flatnonzero(live[:count])
        if len(slots) > TRAIN_SAMPLE:
            slots = np.sort(np.random.default_rng(SEED).choice(slots, TRAIN_SAMPLE, replace=False))
        sample = index.reconstruct_batch(slots.astype(np.int64))
        made._codes.pq.cp.seed = SEED  # the k-means of each sub-quantiser: same data, same codes
        made._codes.train(np.ascontiguousarray(sample, dtype=np.float32))
        del sample
        for start in range(0, count, CHUNK):
            n = min(CHUNK, count - start)
            made._codes.add(np.ascontiguousarray(index.reconstruct_n(start, n), dtype=np.float32))
        made.scrub(np.flatnonzero(~live[:count]))  # dead slots: as a removal leaves them
        made.trained_on = count
        return made

    @property
    def ntotal(self) -> int:
        return int(self._codes.ntotal)

    def add(self, vectors: Any) -> None:
        """Codes for the slots just added to the index (same order)."""
        self._codes.add(vectors)

    def scrub(self, slots: Any) -> None:
        """Overwrite the codes of removed ``slots`` with ``neutral_code`` (``VectorIndex.
        _scrub``): 4-bit codes are a coarse copy of the vector, and a forgotten memory leaves
        none. Packed codes are interleaved in blocks of ``nvec`` slots, so each is written
        through FAISS's own packer; the other slots' codes do not move."""
        import faiss
        import numpy as np

        packer = self._codes.get_CodePacker()  # type: ignore[attr-defined]
        code = self.neutral_code()
        data = faiss.rev_swig_ptr(self._codes.codes.data(), self._codes.codes.size())
        nvec, size = int(packer.nvec), int(packer.block_size)
        for slot in np.asarray(slots, dtype=np.int64).tolist():
            if 0 <= slot < self.ntotal:
                block = data[(slot // nvec) * size :]
                packer.pack_1_c(faiss.swig_ptr(code), slot % nvec, faiss.swig_ptr(block))

    def neutral_code(self) -> Any:
        """The code a removed slot gets: each sub-quantiser's shortest centroid, packed.

        Why not code 0: every dead slot shares the code it gets, and code 0 decodes to
        whatever the first centroids add up to. At 100k MiniLM vectors it decoded to a norm
        of 1.02 scoring up to 0.51 against real queries, above the 1,000th best live vector
        (0.41 for some): all the dead slots would fill a query's candidates. The shortest
        centroids decode to a norm of 0.22, scoring at most 0.06 (measured on the same
        index). Built from the codebooks alone: it says nothing about any vector.
        """
        import faiss
        import numpy as np

        pq = self._codes.pq
        centroids = faiss.vector_to_array(pq.centroids).reshape(pq.M, pq.ksub, pq.dsub)
        shortest = np.argmin((centroids**2).sum(axis=2), axis=1)
        packed = np.zeros(int(pq.code_size), dtype=np.uint8)
        for sub, centroid in enumerate(shortest.tolist()):  # 4 bits each, low nibble first
            packed[sub // 2] |= (centroid & 15) << (4 * (sub % 2))
        return packed

    def candidates(self, query: Any, want: int) -> Any:
        """The ``want`` slots whose codes score best against ``query`` (1 × dim float32)."""
        _, slots = self._codes.search(query, want)
        found = slots[0]
        return found[found >= 0]

    def stale(self, total: int) -> bool:
        """The index has grown ``RETRAIN_GROWTH``-fold since the codebooks were trained."""
        return total > RETRAIN_GROWTH * max(self.trained_on, 1)

    def memory_bytes(self) -> int:
        return self.ntotal * (self.dim // 4) + (self.dim // 2) * 16 * 2 * 4
