"""Corpora: ``/api/corpus`` (build, list, show, rebuild, delete).

A corpus's metadata is the stored ``workbench.knowledge.corpus.Corpus`` without its
observations (snake_case, as stored), plus ``primed`` and ``warnings``. The filter is kept as
the stored object (``workbench.knowledge.corpus_filter`` defines it). The models live in
``workbench.knowledge.corpus``, whose functions return them (the routes return what it gives).
"""

from __future__ import annotations

from workbench.knowledge.corpus import (
    CorpusBuilt,
    CorpusDeleted,
    CorpusInfo,
    CorpusList,
    CorpusRebuilt,
    UnreadableCorpus,
)

__all__ = [
    "CorpusBuilt",
    "CorpusDeleted",
    "CorpusInfo",
    "CorpusList",
    "CorpusRebuilt",
    "UnreadableCorpus",
]
