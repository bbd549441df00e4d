"""Vectors keyed by content, and the FAISS index: real SQLite, real FAISS, the real model.

Approximate-index recall is measured on *clustered* vectors (random ones make it meaningless,
see ENVIRONMENT.md).
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import clustered_vectors
from tests.shared_model import Counting, minilm
from workbench.models import Observation
from workbench.recall import vectors
from workbench.recall.vectors import VectorIndex
from workbench.store.database import Store

clustered = partial(clustered_vectors, clusters=20, spread=0.35)


def brute(matrix: np.ndarray, ids: list[int], query: np.ndarray, k: int) -> list[int]:
    scores = matrix @ query
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


def build(kind: str, matrix: np.ndarray, ids: list[int]) -> VectorIndex:
    index = VectorIndex("test-model", matrix.shape[1], kind)  # type: ignore[arg-type]
    index.add(ids, [f"h{i}" for i in ids], matrix)
    return index


# ----- the embedded text ----------------------------------------------------------------------
def test_embed_text_is_one_function_over_every_field() -> None:
    obs = {
        "title": "Fixed retry loop",
        "subtitle": "worker",
        "narrative": "Backoff is capped.",
        "facts": json.dumps(["cap 300 s", "  "]),
        "concepts": ["retry", "queue"],
    }
    text = vectors.embed_text(obs)
    assert text == "Fixed retry loop\nworker\nBackoff is capped.\ncap 300 s\nConcepts: retry, queue"
    model = Observation(
        id=1, project="p", created_at="x", created_at_epoch=0, content_hash="c",
        title="Fixed retry loop", subtitle="worker", narrative="Backoff is capped.",
        facts=["cap 300 s"], concepts=["retry", "queue"],
    )  # fmt: skip
    assert vectors.embed_text(model) == text
    assert vectors.text_hash(text) == vectors.text_hash(vectors.embed_text(model))
    assert len(vectors.text_hash(text)) == 64


def test_pack_is_little_endian_float32() -> None:
    blob = vectors.pack(np.array([1.0, -2.5], dtype=np.float32))
    assert blob == np.array([1.0, -2.5], dtype="<f4").tobytes()
    np.testing.assert_array_equal(vectors.unpack(blob, 2), [1.0, -2.5])


# ----- the cache ------------------------------------------------------------------------------
@pytest.mark.slow
def test_cache_is_asked_once_per_batch_and_only_missing_texts_are_embedded(
    tmp_path: Path,
) -> None:
    model = Counting(minilm())
    texts = {vectors.text_hash(t): t for t in ["alpha retry", "beta queue", "gamma index"]}
    with Store(tmp_path / "w.db") as store:
        selects: list[str] = []
        store.conn.set_trace_callback(
            lambda sql: selects.append(sql) if "FROM embeddings" in sql else None
        )
        first = vectors.vectors_for(store.conn, model, texts)
        assert (first.embedded, first.reused, model.calls, model.texts) == (3, 0, 1, 3)
        assert len(selects) == 1  # one cache query for the whole batch

        selects.clear()
        again = vectors.vectors_for(store.conn, model, texts)
        assert (again.embedded, again.reused, model.calls) == (3 - 3, 3, 1)  # zero model calls
        assert len(selects) == 1
        for digest in texts:
            np.testing.assert_allclose(first.vectors[digest], again.vectors[digest], atol=1e-6)

        changed = {**texts, vectors.text_hash("gamma index v2"): "gamma index v2"}
        third = vectors.vectors_for(store.conn, model, changed)
        assert (third.embedded, model.calls, model.texts) == (1, 2, 4)  # one new text, one call
        row = store.conn.execute("SELECT dim, length(vector) FROM embeddings LIMIT 1").fetchone()
        assert tuple(row) == (384, 384 * 4)


def test_forget_drops_every_models_vector_of_a_text(tmp_path: Path) -> None:
    with Store(tmp_path / "w.db") as store:
        vectors.store_vectors(store.conn, "m1", {"h": np.ones(4, dtype=np.float32) / 2})
        vectors.store_vectors(store.conn, "m2", {"h": np.ones(4, dtype=np.float32) / 2})
        vectors.store_vectors(store.conn, "m1", {"k": np.ones(4, dtype=np.float32) / 2})
        assert vectors.forget(store.conn, ["h"]) == 2
        left = [r[0] for r in store.conn.execute("SELECT text_hash FROM embeddings")]
        assert left == ["k"]


# ----- the index ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_search_add_remove(kind: str) -> None:
    matrix = clustered(500)
    ids = list(range(1000, 1500))
    index = build(kind, matrix, ids)
    top = index.search(matrix[7], 5)
    assert top[0][0] == 1007
    assert top[0][1] == pytest.approx(1.0, abs=1e-4)
    assert [s for _, s in top] == sorted((s for _, s in top), reverse=True)

    orphaned = index.remove([1007, 999_999])
    assert orphaned == ["h1007"]
    assert 1007 not in [i for i, _ in index.search(matrix[7], 10)]
    assert len(index) == 499

    index.add([1007], ["h1007b"], matrix[8:9])  # the id comes back with other content
    assert index.search(matrix[8], 2)[0][1] == pytest.approx(1.0, abs=1e-4)
    assert {i for i, _ in index.search(matrix[8], 2)} == {1007, 1008}
    assert index.hashes()[1007] == "h1007b"


def test_hnsw_recall_on_clustered_data_is_close_to_exact() -> None:
    matrix = clustered(5000, dim=64)
    ids = list(range(1, 5001))
    flat, hnsw = build("flat", matrix, ids), build("hnsw", matrix, ids)
    rng = np.random.default_rng(9)  # queries from the data's own clusters, not fresh centres
    queries = matrix[rng.integers(0, 5000, 100)] + 0.2 * rng.normal(size=(100, 64))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    hits = sum(
        len({i for i, _ in flat.search(q, 10)} & {i for i, _ in hnsw.search(q, 10)})
        for q in queries
    )
    assert hits / 1000 >= 0.9


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
@pytest.mark.parametrize("allowed_count", [3, 300, 6000])  # exact subset ≤ 4096 < selector
def test_allowed_ids_never_leak_and_match_brute_force(kind: str, allowed_count: int) -> None:
    matrix = clustered(8000, dim=32)
    ids = list(range(1, 8001))
    index = build(kind, matrix, ids)
    rng = np.random.default_rng(3)
    allowed = sorted(int(i) for i in rng.choice(ids, allowed_count, replace=False))
    positions = [i - 1 for i in allowed]
    query = matrix[int(rng.integers(0, 8000))]
    got = index.search(query, 10, allowed + [123_456_789])  # unknown ids are ignored
    assert {i for i, _ in got} <= set(allowed)
    expected = brute(matrix[positions], allowed, query, 10)
    overlap = len({i for i, _ in got} & set(expected))
    exact = kind == "flat" or allowed_count <= 4096  # small sets are scored exactly
    assert overlap >= (len(expected) if exact else 8), (got, expected)


@pytest.mark.parametrize("kind", ["fp16", "flat", "hnsw_fp16"])
@pytest.mark.parametrize("allowed_count", [300, 3000])
def test_a_filtered_search_gives_the_full_scans_own_scores(kind: str, allowed_count: int) -> None:
    """A project filter of a few hundred to a few thousand slots is scanned by FAISS under its
    bitmap (``VectorIndex._direct_limit``): the same ranking as an exact scan of the allowed
    vectors, and each hit's score bit for bit the one the unfiltered scan gives that vector
    (a hybrid search fuses scores, so a filter must not move them). Before, these sets were
    decoded and scored by numpy, whose float16 decode and product rounded differently."""
    matrix = clustered(8000, dim=64)
    ids = list(range(1, 8001))
    rng = np.random.default_rng(5)
    allowed = {int(i) for i in rng.choice(ids, allowed_count, replace=False)}
    index = VectorIndex("test-model", 64, kind)  # type: ignore[arg-type]
    index.add(
        ids, [f"h{i}" for i in ids], matrix, projects=["a" if i in allowed else "b" for i in ids]
    )
    full = VectorIndex("test-model", 64, "flat" if kind == "flat" else "fp16")  # type: ignore[arg-type]
    full.add(ids, [f"h{i}" for i in ids], matrix)
    for n in range(20):
        query = matrix[int(rng.integers(0, 8000))]
        everything = dict(full.search(query, 8000))
        for got in (
            index.search(query, 10, projects=["a"]),
            index.search(query, 10, sorted(allowed)),
        ):
            assert {i for i, _ in got} <= allowed
            assert [s for _, s in got] == [everything[i] for i, _ in got], n
            best = sorted(allowed, key=lambda i: (-everything[i], i))[:10]
            assert [i for i, _ in got] == best, n


def test_an_empty_allowed_set_returns_nothing() -> None:
    index = build("flat", clustered(50), list(range(1, 51)))
    assert index.search(clustered(1)[0], 5, []) == []
    assert VectorIndex("m", 64).search(clustered(1)[0], 5) == []


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_save_and_load_give_the_same_results(tmp_path: Path, kind: str) -> None:
    matrix = clustered(1000)
    ids = list(range(1, 1001))
    index = build(kind, matrix, ids)
    index.remove([5, 6])
    index.save(tmp_path)
    assert not list(tmp_path.glob("*.tmp"))
    loaded, how = VectorIndex.load(tmp_path, "test-model", 64, kind)  # type: ignore[arg-type]
    assert loaded is not None, how
    assert len(loaded) == 998
    assert loaded.hashes() == index.hashes()
    for q in matrix[:20]:
        assert loaded.search(q, 10) == index.search(q, 10)


def test_save_makes_the_data_durable_before_the_meta_that_declares_it_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The meta is the commit mark of a saved set: it must not reach the disk before the
    FAISS file and the slot arrays it declares, and the folder holding the renames is synced
    last (a power cut otherwise leaves a meta over a torn ``.faiss``). The real ``os.fsync``
    and ``os.replace`` run; each call is recorded on the way through."""
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append(("replace", os.path.basename(str(dst))))
        real_replace(src, dst)

    index = build("flat", clustered(200), list(range(1, 201)))
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    index.save(tmp_path)
    monkeypatch.undo()

    where = vectors.paths(tmp_path, "test-model", "flat")
    faiss, ids, meta = (where[part].name for part in ("faiss", "ids", "meta"))
    folder = tmp_path.name
    meta_in_place = events.index(("replace", meta))
    synced = [name for verb, name in events[:meta_in_place] if verb == "fsync"]
    assert f"{faiss}.tmp" in synced, events  # the FAISS file's bytes
    assert f"{ids}.tmp" in synced, events
    assert f"{meta}.tmp" in synced, events
    # The data files' renames are on disk (their folder synced) before the meta's rename.
    renamed_data = max(events.index(("replace", faiss)), events.index(("replace", ids)))
    assert ("fsync", folder) in events[renamed_data:meta_in_place], events
    assert ("fsync", folder) in events[meta_in_place:], events  # and the meta's, last
    loaded, how = VectorIndex.load(tmp_path, "test-model", 64, "flat")
    assert loaded is not None, how


def test_load_refuses_a_torn_or_foreign_index(tmp_path: Path) -> None:
    build("flat", clustered(100), list(range(1, 101))).save(tmp_path)
    assert VectorIndex.load(tmp_path, "other-model", 64, "flat")[0] is None
    assert VectorIndex.load(tmp_path, "test-model", 32, "flat")[0] is None
    meta = vectors.paths(tmp_path, "test-model", "flat")["meta"]
    doc = json.loads(meta.read_text(encoding="utf-8"))
    meta.write_text(json.dumps({**doc, "token": "from-another-save"}), encoding="utf-8")
    index, why = VectorIndex.load(tmp_path, "test-model", 64, "flat")
    assert index is None
    assert "incomplete" in why
    vectors.paths(tmp_path, "test-model", "flat")["faiss"].write_bytes(b"garbage")
    meta.write_text(json.dumps(doc), encoding="utf-8")
    index, why = VectorIndex.load(tmp_path, "test-model", 64, "flat")
    assert index is None
    assert "unreadable" in why
    assert VectorIndex.load(tmp_path / "absent", "test-model", 64, "flat")[0] is None
