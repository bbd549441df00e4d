"""The process's caches of memory text, and the one call that empties them (a forget).

A search's second stage keeps what it read of its candidates between requests, so a warm
search costs little (``bench/relevance_ltr.py --latency``): each text's words, stems and
identifiers (``rerank_features``), each text's word pieces and every chunk of text with its
pieces (``rerank_maxsim``: the chunks are the words themselves), the speaker labels
(``rerank_learned``). A forgotten memory's words would stay there until other searches pushed
them out, so ``workbench.forget`` empties them all; they refill on the next searches.

Only modules already imported are touched: emptying a cache must not import the stage (a
process that never searched holds nothing).
"""

from __future__ import annotations

import sys

_HOLDERS = (
    "workbench.recall.rerank_features",
    "workbench.recall.rerank_maxsim",
    "workbench.recall.rerank_learned",
)


def clear() -> None:
    """Empty every cache of memory text this process holds."""
    for name in _HOLDERS:
        module = sys.modules.get(name)
        if module is not None:
            module.clear_cache()
