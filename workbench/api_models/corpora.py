"""Corpora: ``/api/corpus`` (build, list, show, rebuild, delete).

A corpus's metadata is the stored ``workbench.knowledge.corpus.Corpus`` without its
observations (snake_case, as stored), plus ``primed`` and ``warnings``. The filter is kept as
the stored object (``workbench.knowledge.corpus_filter`` defines it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from workbench.knowledge.corpus import CorpusStats


class CorpusInfo(BaseModel):
    version: int
    name: str
    description: str
    created_at: str
    updated_at: str
    filter: dict[str, Any]
    stats: CorpusStats
    system_prompt: str
    session_id: str | None
    primed: bool
    warnings: list[str]


class CorpusBuilt(CorpusInfo):
    replaced: bool


class CorpusRebuilt(CorpusInfo):
    added: int
    removed: int


class UnreadableCorpus(BaseModel):
    """A corpus file that could not be read, listed with why."""

    name: str
    error: str
    primed: bool


class CorpusList(BaseModel):
    corpora: list[CorpusInfo | UnreadableCorpus]
    count: int


class CorpusDeleted(BaseModel):
    name: str
    deleted: bool
