"""A removed vector leaves no copy in the index: not in memory, not in the saved file.

Why it matters: embeddings can be inverted to text (``vectors.forget``'s docstring), so a
forgotten memory must not linger as a vector. A removal used to clear only the slot's live
bit: the vector's codes stayed in the FAISS index (in RAM, and in every save of the
``.faiss`` file) until a compaction, which runs only when dead slots outnumber live ones.
At 100k memories, a forgotten one stayed on disk for good.

- Library level, every index kind: after ``remove`` (a forget, an edit, a replacement) no
  slot decodes to anything near the removed vector, in memory or in the saved file read
  back raw, and every live search answers as a twin index that never held it.
- The prefilter's 4-bit codes (``vector_prefilter``) of a removed slot are scrubbed too.
- End to end: a real service with MiniLM; ``workbench forget`` of a saved memory; the index
  file the service saves holds no row near the memory's vector.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, clustered_vectors
from workbench.recall import vectors
from workbench.recall.vectors import KINDS, VectorIndex

DIM = 32


def decoded(raw: Any) -> Any:
    """Every slot of a FAISS index (or of an HNSW index's storage), decoded to float32."""
    import faiss

    inner = faiss.downcast_index(raw.storage) if hasattr(raw, "storage") else raw
    return inner.reconstruct_n(0, int(inner.ntotal))


def nearest(rows: Any, targets: Any) -> float:
    """The highest cosine between any row and any target (rows may be zeros)."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows / np.where(norms == 0, 1, norms)
    return float((unit @ np.asarray(targets).T).max())


@pytest.mark.parametrize("kind", KINDS)
def test_a_removed_vector_is_gone_from_memory_and_from_the_saved_file(
    kind: str, tmp_path: Path
) -> None:
    matrix = clustered_vectors(300, DIM, clusters=30, spread=0.35, seed=4)
    ids = list(range(1, 301))
    gone = [5, 77, 200]
    index = VectorIndex("m", DIM, kind)  # type: ignore[arg-type]
    twin = VectorIndex("m", DIM, kind)  # type: ignore[arg-type]
    index.add(ids, [f"h{i}" for i in ids], matrix)
    kept = [i for i in ids if i not in gone]
    twin.add(kept, [f"h{i}" for i in kept], matrix[[i - 1 for i in kept]])
    removed = matrix[[i - 1 for i in gone]]
    # Unique vectors: the nearest other row sits well below the removed ones' own cosine.
    assert nearest(matrix[[i - 1 for i in kept]], removed) < 0.995

    assert nearest(decoded(index._index), removed) > 0.995  # held before the removal
    index.remove(gone)
    assert nearest(decoded(index._index), removed) < 0.995
    index.save(tmp_path)
    raw = vectors._faiss().read_index(str(vectors.paths(tmp_path, "m", kind)["faiss"]))  # type: ignore[arg-type]
    assert int(raw.ntotal) == 300  # the dead slots are still there, holding nothing
    assert nearest(decoded(raw), removed) < 0.995

    for q in matrix[::17]:  # live searches are those of an index that never held them
        same_hits(index.search(q, 10), twin.search(q, 10))
        same_hits(
            index.search(q, 5, projects=None, allowed_ids=ids[:150]),
            twin.search(q, 5, allowed_ids=ids[:150]),
        )


def same_hits(found: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    """The same ids in the same order, each score equal to float32's precision.

    Why not ``==``: the two indexes hold their rows in different graphs, and FAISS computes
    a distance one row or four at a time, depending on where the walk meets it. On an AVX2-only
    host the two paths round differently (0.8639568 against 0.8639567: one float32 step).
    """
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-6)


def test_a_replaced_vector_is_gone_too() -> None:
    matrix = clustered_vectors(50, DIM, clusters=5, spread=0.35, seed=5)
    index = VectorIndex("m", DIM, "fp16")
    index.add(list(range(1, 51)), [f"h{i}" for i in range(1, 51)], matrix)
    old = matrix[[9]]
    index.add([10], ["new"], -old)  # an edit: the same id, another text
    assert nearest(decoded(index._index), old) < 0.995


def prefilter_codes(index: VectorIndex, slots: Any = None) -> Any:
    """The prefilter's 4-bit codes of ``slots`` (every slot by default), unpacked: one row of
    ``code_size`` bytes per slot."""
    import faiss

    codes = index._prefilter._codes  # type: ignore[union-attr]
    packer = codes.get_CodePacker()
    data = faiss.rev_swig_ptr(codes.codes.data(), codes.codes.size())
    chosen = range(int(codes.ntotal)) if slots is None else [int(s) for s in slots]
    rows = np.zeros((len(chosen), packer.code_size), dtype=np.uint8)
    for n, slot in enumerate(chosen):
        block = data[(slot // packer.nvec) * packer.block_size :]
        packer.unpack_1_c(faiss.swig_ptr(block), slot % packer.nvec, faiss.swig_ptr(rows[n]))
    return rows


def prefilter_rows(index: VectorIndex) -> Any:
    """Every slot of the prefilter, decoded through its product quantiser."""
    return index._prefilter._codes.pq.decode(prefilter_codes(index))  # type: ignore[union-attr]


def test_the_prefilters_codes_of_a_removed_slot_are_scrubbed() -> None:
    matrix = clustered_vectors(3000, DIM, clusters=300, spread=0.35, seed=6)
    ids = list(range(1, 3001))
    index = VectorIndex("m", DIM, "fp16", prefilter_from=1000)
    index.add(ids, [f"h{i}" for i in ids], matrix)
    assert index.prepare_prefilter()
    gone = [3, 1500, 2999]
    removed = matrix[[i - 1 for i in gone]]
    before = prefilter_rows(index)
    assert nearest(before[[i - 1 for i in gone]], removed) > 0.8  # a coarse copy, but a copy
    index.remove(gone)
    after = prefilter_rows(index)
    assert nearest(after[[i - 1 for i in gone]], removed) < 0.5
    # The neutral code: the shortest centroids, so dead slots never crowd a query's candidates.
    neutral = index._prefilter._codes.pq.decode(index._prefilter.neutral_code()[None])  # type: ignore[union-attr]
    assert np.linalg.norm(neutral) < np.linalg.norm(before, axis=1).min()
    live = [i - 1 for i in ids if i not in gone]
    assert np.array_equal(before[live], after[live])  # nobody else's codes moved
    assert index.prefiltered  # still in use: no rebuild needed


# ----- end to end -----------------------------------------------------------------------------


@pytest.mark.slow
def test_forget_leaves_no_vector_of_the_memory_in_the_saved_index(make_service: Any) -> None:
    svc = make_service(WORKBENCH_EMBEDDER="minilm")
    notes = [
        ("Rotated the signing key for webhooks", "The old key stays valid for a day."),
        ("Pinned the Postgres image", "16.4, so the catalog migrations stay reproducible."),
        ("Cache warmup moved to startup", "First request no longer pays 2 s."),
    ]
    saved = []
    for title, text in notes:
        status, body = svc.post("/api/memory/save", {"text": text, "title": title, "project": "p"})
        assert status == 200, body
        saved.append(int(body["id"]))
    index_dir = svc.data_dir / "index"

    def saved_index() -> tuple[dict[str, Any], Any] | None:
        metas = sorted(index_dir.glob("observations.*.json"))
        metas = [m for m in metas if not m.name.endswith(".ids.json")]
        if not metas:
            return None
        meta = json.loads(metas[0].read_text(encoding="utf-8"))
        raw = vectors._faiss().read_index(str(metas[0].with_suffix(".faiss")))
        return meta, raw

    forgotten = saved[0]
    deadline = time.monotonic() + 120
    while (found := saved_index()) is None or found[0]["count"] < len(saved):
        assert time.monotonic() < deadline, "the service never saved an index of every memory"
        time.sleep(0.2)
    conn = __import__("sqlite3").connect(f"file:{svc.data_dir / 'workbench.db'}?mode=ro", uri=True)
    (blob,) = conn.execute(
        "SELECT e.vector FROM embeddings e JOIN observations o ON o.id = ? WHERE e.text_hash = ?",
        (forgotten, vectors.text_hash(vectors.embed_text(_row(conn, forgotten)))),
    ).fetchone()
    conn.close()
    vector = np.frombuffer(blob, dtype="<f4")[None]
    assert nearest(decoded(found[1]), vector) > 0.99  # the saved index holds it now

    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "forget", str(forgotten), "--json"],
        env=svc.env, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    deadline = time.monotonic() + 120
    while (found := saved_index()) is None or found[0]["count"] != len(saved) - 1:
        assert time.monotonic() < deadline, "the service never saved the index after the forget"
        time.sleep(0.2)
    assert nearest(decoded(found[1]), vector) < 0.99
    svc.stop()  # the save at shutdown too
    found = saved_index()
    assert found is not None
    assert nearest(decoded(found[1]), vector) < 0.99
    # Nor is the cached float32 vector anywhere on disk: not in the database file, not in its
    # WAL (a deleted row's bytes stay in a freed page unless the delete zeroes them).
    pieces = [blob[start : start + 48] for start in range(0, len(blob) - 48, 256)]
    holding = sorted(
        str(path.relative_to(svc.data_dir))
        for path in svc.data_dir.rglob("*")
        if path.is_file() and any(piece in path.read_bytes() for piece in pieces)
    )
    assert holding == []


def _row(conn: Any, observation_id: int) -> dict[str, Any]:
    cursor = conn.execute(
        "SELECT title, subtitle, narrative, facts, concepts FROM observations WHERE id = ?",
        (observation_id,),
    )
    names = [c[0] for c in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


@pytest.mark.slow
def test_a_pass_that_removed_vectors_saves_without_waiting_for_the_interval(
    data_dir: Path,
) -> None:
    """The saved file stops holding a forgotten vector on the pass that removed it, not up to
    ``save_interval_s`` later (here an hour: before, the next save came only then)."""
    from tests.shared_model import minilm
    from tests.test_reindex import add_notes
    from workbench.recall.indexer import Indexer
    from workbench.settings import load_settings
    from workbench.store import observations
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store:
        ids = add_notes(store)
        settings = load_settings(data_dir, embedder="minilm")
        model = minilm()
        indexer = Indexer(store, settings, lambda _: (model, "loaded"), save_interval_s=3600)
        indexer.load()
        assert indexer.sync() == (len(ids), 0)
        indexer._save(force=True)
        meta = next(p for p in settings.index_dir.glob("*.json") if not p.name.endswith("ids.json"))
        assert json.loads(meta.read_text())["count"] == len(ids)
        with atomic(store.conn):
            observations.delete_ids(store.conn, ids[:1])
        assert indexer.sync() == (0, 1)
        indexer._save(force=False)  # what the thread's loop calls after each pass
        assert json.loads(meta.read_text())["count"] == len(ids) - 1
        saved_at = json.loads(meta.read_text())["saved_at"]
        indexer._save(force=False)  # nothing more until the next removal or the interval
        assert json.loads(meta.read_text())["saved_at"] == saved_at


def test_forget_drops_the_cached_vector_before_the_purge(data_dir: Path) -> None:
    """The embeddings cache row of a forgotten text goes in the forget itself, before its purge
    (``VACUUM``, WAL truncated), so no byte of it is left in the file, whichever SQLite build
    (one built without ``SECURE_DELETE`` leaves a deleted row's bytes in a freed page) and
    whenever the indexer's next pass comes. A text another live observation shares keeps its
    row (it is that observation's vector too)."""
    from workbench import forget
    from workbench.models import ObservationDraft
    from workbench.store import observations
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store:
        conn = store.conn
        drafts = [
            ObservationDraft(title="Rotated the webhook key", narrative="qvxsecret rotation"),
            ObservationDraft(title="Shared wording", narrative="same text twice"),
            ObservationDraft(title="Shared wording", narrative="same text twice"),
        ]
        with atomic(conn):
            ids = [
                observations.insert(conn, d, content_session_id=f"s{n}", project="p")[0]
                for n, d in enumerate(drafts)
            ]
        hashes = {
            i: vectors.text_hash(vectors.embed_text(observations.get(conn, i)))  # type: ignore[arg-type]
            for i in ids
        }
        rng = np.random.default_rng(3)
        cached = {h: rng.normal(size=DIM).astype(np.float32) for h in set(hashes.values())}
        vectors.store_vectors(conn, "m", cached)
        secret = vectors.pack(cached[hashes[ids[0]]])

        report = forget.forget(conn, data_dir / "spool", [ids[0], ids[1]])
        assert [d.id for d in report.deleted] == ids[:2]
        left = {r[0] for r in conn.execute("SELECT text_hash FROM embeddings")}
        assert left == {hashes[ids[2]]}  # the shared text's vector stays for its twin
        assert "cached vectors" in {c.place for c in report.cleaned}
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert secret[:64] not in path.read_bytes(), path


@pytest.mark.slow
def test_a_vector_the_worker_embedded_while_its_memory_was_forgotten_is_not_stored(
    data_dir: Path,
) -> None:
    """The embedding worker reads a chunk of observations, embeds them (seconds under load)
    and stores the vectors. A forget in between used to be undone for the vector: the
    worker wrote the forgotten text's vector after the forget had deleted it, and nothing
    ever deleted it again (no observation holds that text any more). Here the worker's own
    step runs on rows read before the forget, as that interleaving has it; the forgotten
    text's vector is not stored, the other one is."""
    from tests.shared_model import minilm
    from workbench import forget
    from workbench.models import ObservationDraft
    from workbench.recall import embed_worker
    from workbench.store import observations
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store:
        conn = store.conn
        with atomic(conn):
            ids = [
                observations.insert(
                    conn, ObservationDraft(title=t, narrative=n), content_session_id="s",
                    project="p",
                )[0]
                for t, n in [("Webhook key", "qvxsecret rotated"), ("Image pin", "16.4")]
            ]  # fmt: skip
        read = conn.execute(
            "SELECT id, title, subtitle, narrative, facts, concepts FROM observations ORDER BY id"
        ).fetchall()
        assert forget.forget(conn, data_dir / "spool", ids[:1]).deleted
        model = minilm()
        embed_worker._embed_missing(conn, model, model.name, read, 0, ids[-1])
        stored = {r[0] for r in conn.execute("SELECT text_hash FROM embeddings")}
        assert stored == {vectors.text_hash(vectors.embed_text(read[1]))}
