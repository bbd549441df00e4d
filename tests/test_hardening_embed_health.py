"""The embedding pipeline tells the truth in health (issue 19, item 12).

Real service, real ONNX int8 model (``tests/onnx_model.py``), real signals and real rows:

- cache rows of another dimension (a model that changed shape under the same name, a bad
  import) stopped every reindex ("failed") while health said ready: they are derived data, so
  they are re-embedded, and the reindex completes;
- a SIGSTOPped embedding worker showed as ``idle``: it now shows as ``stalled`` once it has
  not been heard from (it sends a heartbeat), and goes back when it runs again;
- a reindex that fails no longer leaves health saying ``ready``.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service
from tests.test_embed_worker import (
    NOTES,
    found_by_meaning,
    running_worker,
    save,
    start,
    wait_vectors,
)
from tests.test_reindex import add_notes, make_indexer
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow


def _reindexed(svc: Service, timeout: float = 120.0) -> dict[str, Any]:
    status, body = svc.post("/api/reindex")
    assert status == 202, body
    deadline = time.monotonic() + timeout
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        _, index = svc.get("/api/index/status")
        job = index["reindex"] or {}
        if job.get("state") in ("done", "failed"):
            return index
        time.sleep(0.2)
    raise AssertionError(f"the reindex never ended: {job}")


def _indexed(svc: Service, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while svc.get("/api/index/status")[1]["indexed"] != count:
        assert time.monotonic() < deadline, f"the index never held {count} vectors"
        time.sleep(0.2)


def _cache_dims(db: Path) -> list[int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [int(r[0]) for r in conn.execute("SELECT dim FROM embeddings ORDER BY text_hash")]
    finally:
        conn.close()


def test_cache_rows_of_another_dimension_are_re_embedded_and_reindex_completes(
    make_service: Any, onnx_model: Path
) -> None:
    svc = start(make_service, onnx_model)
    save(svc, NOTES)
    _indexed(svc, len(NOTES))
    dim = svc.get("/api/index/status")[1]["dim"]
    svc.stop()
    db = svc.data_dir / "workbench.db"
    conn = sqlite3.connect(db)
    with conn:  # every cached vector now has 2 dimensions instead of the model's
        conn.execute("UPDATE embeddings SET dim = 2, vector = zeroblob(8)")
    conn.close()
    assert set(_cache_dims(db)) == {2}

    svc.start()
    index = _reindexed(svc)
    assert index["reindex"]["state"] == "done", index["reindex"]
    _indexed(svc, len(NOTES))  # the embedding worker re-embeds the stale rows
    assert set(_cache_dims(db)) == {dim}  # replaced in place
    _, health = svc.get("/api/health")
    assert health["embeddings"]["state"] == "ready"
    found_by_meaning(svc)


def test_a_stopped_embedding_worker_shows_as_stalled_not_idle(
    make_service: Any, onnx_model: Path
) -> None:
    svc = start(make_service, onnx_model)
    pid = running_worker(svc)
    wait_vectors(svc, lambda v: v["worker"]["state"] == "idle" and v["pid"] == pid)
    os.kill(pid, signal.SIGSTOP)
    try:
        stalled = wait_vectors(svc, lambda v: v["worker"]["state"] == "stalled")
        assert stalled["pid"] == pid
        assert "not been heard from" in stalled["worker"]["reason"]
    finally:
        os.kill(pid, signal.SIGCONT)
    back = wait_vectors(svc, lambda v: v["worker"]["state"] == "idle")
    assert back["pid"] == pid


def test_health_is_not_ready_while_the_index_cannot_be_rebuilt(data_dir: Path) -> None:
    """A reindex that fails (here the FTS table is gone) leaves the index stale: health said
    ``ready`` all the same. It now says ``error`` with why, until a reindex succeeds."""
    with Store(data_dir / "workbench.db") as store:
        add_notes(store)
        indexer, _ = make_indexer(data_dir, store)
        indexer.sync()
        assert indexer.health()["state"] == "ready"
        with atomic(store.conn):
            store.conn.execute("DROP TABLE observations_fts")
        job = indexer.reindex(indexer.request_reindex())
        assert job.state == "failed"
        health = indexer.health()
        assert health["state"] == "error"
        assert "the last reindex failed" in health["reason"]
        assert "workbench reindex" in health["reason"]
