"""One real MiniLM per test session, and a wrapper that counts what reaches the model.

Loading the model costs ~5 s, so every in-process test shares one instance (``functools.cache``
makes it once per pytest process). ``Counting`` is not a fake: it forwards to the real model
and only records the calls, so a test can assert "zero model calls" for real.
"""

from __future__ import annotations

import functools
from typing import Any

from workbench.recall.embed import MiniLMEmbedder


@functools.cache
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


class Counting:
    """Forwards to a real embedder; counts calls and texts."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calls = 0
        self.texts = 0

    def embed(self, texts: list[str]) -> Any:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)

    def set_threads(self, threads: int) -> None:
        self.inner.set_threads(threads)
