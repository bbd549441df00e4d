"""The two-tier index's fast tier: memories MiniLM has not reached yet, searchable at once.

Why: the embedding worker upgrades memories to MiniLM at tens of texts per second (single
digits on a busy machine), so after an import of a long history, or behind a burst of hook
traffic, most memories would be found by full text only for many minutes. A static model
distilled from the same MiniLM weights (``static_distill.py``) embeds thousands of texts per
second on the indexer's thread, so this tier holds every observation the MiniLM index lacks,
and each leaves it when its MiniLM vector lands (the upgrade replaces it).

Derived and in memory only: rebuilt at start from the observations still behind (seconds at
100k), never persisted, never written to the embeddings cache; ``workbench reindex`` rebuilds
it with the MiniLM index. One mutator (the indexer thread); searches run on any thread.

Scores: ``score`` maps a static cosine onto MiniLM's scale with the build's calibration
(``a · cos + b``, fitted on pairwise similarities), so the ranker can merge a memory scored by
either tier into one list (each memory by its best available tier: MiniLM when it has one).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from workbench.recall.embed import StaticEmbedder
from workbench.recall.vectors import IndexKind, VectorIndex
from workbench.settings import Settings

log = logging.getLogger("workbench.recall")

# 8-bit codes: ~0.25 KB per 256-d vector (25 MB at 100k behind), cosines within ~0.002.
KIND: IndexKind = "sq8"


class StaticTier:
    """The static model and the index of the observations without a MiniLM vector."""

    def __init__(self, embedder: StaticEmbedder | None, reason: str) -> None:
        self.embedder = embedder
        self.reason = reason
        self.index = VectorIndex(embedder.name, embedder.dim, KIND) if embedder else None
        self.embedded = 0  # texts embedded by this tier since the service started

    @classmethod
    def load(cls, settings: Settings) -> StaticTier:
        """The tier, or an empty one whose ``reason`` says why it is off (never raises)."""
        if not settings.static_tier:
            return cls(
                None,
                "static tier off (static_tier=false): until MiniLM reaches a "
                "memory, full text alone finds it",
            )
        try:
            embedder = StaticEmbedder()
        except Exception as exc:  # missing or broken build: degrade to MiniLM-or-full-text
            log.warning("static tier unavailable: %s", exc)
            return cls(
                None,
                f"static tier unavailable ({exc}); until MiniLM reaches a memory, "
                "full text alone finds it",
            )
        a, b = embedder.calibration
        return cls(embedder, f"{embedder.name} ({embedder.dim}-d) loaded; cos ↦ {a}·cos + {b}")

    @property
    def ready(self) -> bool:
        return self.index is not None

    def empty_copy(self) -> StaticTier:
        """A fresh tier on the same model (a reindex fills it, then swaps it in)."""
        fresh = StaticTier(self.embedder, self.reason)
        fresh.embedded = self.embedded
        return fresh

    def __len__(self) -> int:
        return len(self.index) if self.index is not None else 0

    # ----- the indexer thread ------------------------------------------------------------
    def put(
        self,
        ids: Sequence[int],
        texts: Sequence[str],
        hashes: Sequence[str],
        projects: Sequence[str],
    ) -> int:
        """Embed and add the ``ids`` not already held with the same text; return how many."""
        if self.index is None or self.embedder is None or not ids:
            return 0
        held = self.index.hashes_of(ids)
        fresh = [n for n, i in enumerate(ids) if held.get(int(i)) != hashes[n]]
        if not fresh:
            return 0
        matrix = self.embedder.embed([texts[n] for n in fresh])
        self.index.add(
            [ids[n] for n in fresh],
            [hashes[n] for n in fresh],
            matrix,
            projects=[projects[n] for n in fresh],
        )
        self.embedded += len(fresh)
        return len(fresh)

    def drop(self, ids: Sequence[int] | set[int]) -> None:
        """Upgraded (or deleted) observations leave the tier."""
        if self.index is not None and ids:
            self.index.remove(ids, orphans=False)

    def release(self) -> bool:
        """Let go of the model's token table while the tier is empty; True when it did.

        The indexer calls it once MiniLM has caught up and its worker is asleep (the table
        is ~15 MiB of the service's RSS for nothing then); the next ``put`` loads it again.
        """
        if self.embedder is None or len(self):
            return False
        return self.embedder.release()

    # ----- search (any thread) -----------------------------------------------------------
    def embed_query(self, query: str) -> Any:
        assert self.embedder is not None
        return self.embedder.embed([query])[0]

    def score(self, cosine: float) -> float:
        assert self.embedder is not None
        a, b = self.embedder.calibration
        return a * cosine + b

    def status(self) -> dict[str, Any]:
        return {
            "state": "ready" if self.ready else "off",
            "reason": self.reason,
            "embedder": self.embedder.name if self.embedder else None,
            "indexed": len(self),
            "loaded": self.embedder.loaded if self.embedder else False,
            "embeddedTotal": self.embedded,
        }
