"""The derived indexes: ``POST /api/reindex`` and ``GET /api/index/status``."""

from __future__ import annotations

from typing import Any

from workbench.api_models.base import CamelModel


class ReindexJob(CamelModel):
    """Progress and outcome of one reindex (``workbench.recall.indexer.ReindexJob``)."""

    id: int
    state: str
    phase: str
    done: int
    total: int
    embedded: int
    reused: int
    pruned: int
    fts_seconds: float
    seconds: float
    vectors: str
    error: str | None
    started_at: float


class IndexStatus(CamelModel):
    state: str
    reason: str | None
    embedder: str | None
    dim: int | None
    index: str
    # Searches scan the prefilter's coarse codes first (recall/vector_prefilter.py): built by
    # the indexer thread once ``vector_prefilter_from`` vectors are live.
    prefiltered: bool = False
    indexed: int
    observations: int
    pending: int | None
    worker: dict[str, Any] | None
    torch_imported: bool
    embedded_total: int
    reused_total: int
    memory_bytes: int
    reindex: dict[str, Any] | None
    # A switch of ``vector_index`` under way (``from``, ``to``, ``done``, ``total``): the
    # saved ``from`` index answers until ``to`` holds every vector; None otherwise.
    switching: dict[str, Any] | None = None
    # The two-tier index's fast tier (recall/static_tier.py): state, reason, embedder,
    # indexed (observations it holds: the ones MiniLM has not reached); None without a worker.
    static: dict[str, Any] | None = None
    # Observations with a vector in neither tier (found by full text only).
    unsearchable: int | None = None
    # Which tier finds each observation by meaning: ``minilm`` (its index), ``static`` (MiniLM
    # has not reached it yet), ``fullTextOnly`` (neither); None without an index.
    tiers: dict[str, int] | None = None
    # Every memory's words for the second stage are kept (recall/token_rows.py): True once the
    # indexer's sweep reached the last observation; False while it makes them (after an
    # upgrade or a reindex, ~10 s at 100k; not while the embedding worker catches up, when a
    # search tokenizes what has no row); None when no second stage reads words.
    words_kept: bool | None = None
    # The memo of recent rankings' first observation (recall/anchor_memo.py): ``held``,
    # ``capacity``, ``reused`` (timeline anchors it gave) and ``ranked`` (anchors ranked).
    timeline_anchors: dict[str, int] | None = None


class ReindexQueued(CamelModel):
    job: dict[str, Any]
    index: IndexStatus
