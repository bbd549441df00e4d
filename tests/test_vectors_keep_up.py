"""Issue 21: vectors that keep up with a real history (the embedding worker's side).

- A restarted service must not have its worker re-read and re-hash every observation from
  id 0 to find the few without a vector (over 100 s at 100k on a loaded box): the worker
  starts after what the index already holds, and is told the scattered ids it lacks.
- An observation whose text is edited in place gets a vector of its new text, and the old
  text's vector is dropped (it could be inverted back to the words that were replaced).
- The worker's thread count follows the spare cores it measures (2 threads double a quiet
  box's rate and halve a busy one's: bench/embed_tuning.py).

Real service, real ONNX model, real SQLite file; edits are made the way any other tool
would make them, with an UPDATE on the store's file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service
from tests.test_crash import wait_for
from tests.test_embed_worker import NOTES, first_pass_done, save, start, wait_vectors
from workbench.models import ObservationDraft
from workbench.recall import vectors
from workbench.recall.cpu_share import threads_for
from workbench.recall.worker_process import plan_start
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow


def worker_argv(pid: int) -> list[str]:
    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    return [part.decode() for part in raw.split(b"\0") if part]


def from_id(pid: int) -> int:
    argv = worker_argv(pid)
    return int(argv[argv.index("--from-id") + 1])


def wait_indexed(svc: Service, count: int) -> None:
    """Until the MiniLM index holds ``count`` memories and none is pending (health's
    ``behind`` is the last pass's figure: 0 until the indexer has seen a new memory)."""

    def done() -> bool:
        _, index = svc.get("/api/index/status")
        return bool(index["indexed"] == count and index["pending"] == 0)

    wait_for(done, timeout=90, what=f"{count} memories in the vector index")


def with_notes_indexed(make_service: Any, onnx_model: Path) -> Service:
    """A MiniLM service holding ``NOTES``, all of them in its vector index."""
    svc = start(make_service, onnx_model)
    save(svc, NOTES)
    wait_indexed(svc, len(NOTES))
    return svc


def test_a_restarted_service_starts_its_worker_after_what_the_index_holds(
    make_service: Any, onnx_model: Path, data_dir: Path
) -> None:
    first = with_notes_indexed(make_service, onnx_model)
    first.stop()
    # A memory written while the service was down (another tool, a restored backup): the
    # only one without a vector.
    with Store(data_dir / "workbench.db") as store, atomic(store.conn):
        added, created = observations.insert(
            store.conn,
            ObservationDraft(title="Flaky DNS in CI", narrative="Pinned the resolver to 1.1.1.1"),
            content_session_id=None,
            project="p",
        )
    assert created
    second = make_service(WORKBENCH_EMBEDDER="minilm", WORKBENCH_ONNX_MODEL_DIR=str(onnx_model))
    pid = wait_vectors(second, lambda v: v["pid"])["pid"]
    assert from_id(pid) == added - 1  # not 0: the five it has are not read again
    wait_indexed(second, len(NOTES) + 1)
    second.stop()
    third = make_service(WORKBENCH_EMBEDDER="minilm", WORKBENCH_ONNX_MODEL_DIR=str(onnx_model))
    rested = wait_vectors(third, first_pass_done)
    assert rested["pid"] is None, rested  # nothing behind: no worker, nothing read
    assert rested["worker"]["state"] == "asleep", rested
    status, found = third.get("/api/search?query=resolver+pinned&mode=vector&format=json")
    assert status == 200, found
    assert found["observations"][0]["id"] == added


def test_an_edited_observation_is_embedded_again_and_its_old_vector_dropped(
    make_service: Any, onnx_model: Path, data_dir: Path
) -> None:
    svc = with_notes_indexed(make_service, onnx_model)
    db = data_dir / "workbench.db"
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute(
            "SELECT id, title, subtitle, narrative, facts, concepts FROM observations"
            " WHERE title = ?",
            (NOTES[0][0],),
        ).fetchone()
    old_hash = vectors.text_hash(vectors.embed_text(row))
    new_title = "Nightly Postgres backup cron silently failed"
    new_narrative = "pg_dump ran out of disk for a week; alerts now fire on a missing dump."
    with Store(db) as store, atomic(store.conn):  # another workbench process's write
        store.conn.execute(
            "UPDATE observations SET title = ?, narrative = ? WHERE id = ?",
            (new_title, new_narrative, row["id"]),
        )
    new_hash = vectors.text_hash(
        vectors.embed_text({**dict(row), "title": new_title, "narrative": new_narrative})
    )

    def cached(text_hash: str) -> int:
        with sqlite3.connect(db, timeout=30) as conn:
            return int(
                conn.execute(
                    "SELECT count(*) FROM embeddings WHERE text_hash = ?", (text_hash,)
                ).fetchone()[0]
            )

    def found_by_new_text() -> bool:
        status, found = svc.get(
            "/api/search?query=database+dump+backup+failed&mode=vector&format=json"
        )
        return status == 200 and found["observations"][0]["id"] == row["id"]

    wait_for(lambda: cached(new_hash) == 1, timeout=90, what="a vector of the edited text")
    wait_for(found_by_new_text, timeout=90, what="the index to hold the edited text's vector")
    assert cached(old_hash) == 0  # the replaced words' vector is gone
    wait_indexed(svc, len(NOTES))


def test_an_edit_of_the_project_alone_moves_the_vector_without_embedding_again(
    make_service: Any, onnx_model: Path, data_dir: Path
) -> None:
    svc = with_notes_indexed(make_service, onnx_model)
    _, before = svc.get("/api/index/status")
    with Store(data_dir / "workbench.db") as store, atomic(store.conn):
        store.conn.execute("UPDATE observations SET project = 'q' WHERE title = ?", (NOTES[0][0],))

    def in_q() -> bool:
        status, found = svc.get(
            "/api/search?query=refunds+charged+twice&mode=vector&project=q&format=json"
        )
        return status == 200 and [o["title"] for o in found["observations"]] == [NOTES[0][0]]

    wait_for(in_q, timeout=90, what="the vector search to find the moved memory in q")
    _, after = svc.get("/api/index/status")
    assert after["worker"]["embedded"] == before["worker"]["embedded"]  # same text, same vector
    assert after["indexed"] == len(NOTES)


def test_the_worker_scans_a_dense_tail_and_names_scattered_ids() -> None:
    # Nothing behind: start after the newest id.
    assert plan_start([], 100) == (100, [])
    # An import: everything from 51 on is behind, read in id order.
    assert plan_start(list(range(51, 101)), 100) == (50, [])
    # Two edited memories long ago and a fresh tail: the tail is scanned, the two named.
    assert plan_start([3, 17, *range(91, 101)], 100) == (90, [3, 17])
    # Scattered only (edits): named, nothing scanned.
    assert plan_start([3, 17], 100) == (100, [3, 17])


def test_the_worker_uses_the_spare_cores_it_measures() -> None:
    assert threads_for(spare=1.9, cores=2) == 2  # quiet: both cores
    assert threads_for(spare=1.0, cores=2) == 1  # one core taken by another process
    assert threads_for(spare=0.0, cores=2) == 1  # busy: one thread, never none
    assert threads_for(spare=1.5, cores=2) == 1  # a second thread must have a core to run on
    assert threads_for(spare=7.9, cores=8) == 8
    assert threads_for(spare=3.2, cores=8) == 3


def test_the_slot_map_answers_as_a_dict_would() -> None:
    """The index's id → slot map (arrays, for RSS) against a plain dict, over random edits."""
    import random

    from workbench.recall.slot_map import SlotMap

    rng = random.Random(21)
    model: dict[int, int] = {}
    slots = SlotMap()
    next_slot = 0
    for _ in range(400):
        if rng.random() < 0.6:
            fresh = {rng.randrange(1, 500) for _ in range(rng.randrange(1, 20))} - set(model)
            new = {i: next_slot + n for n, i in enumerate(sorted(fresh, reverse=True))}
            next_slot += len(new)
            slots.put(list(new), list(new.values()))
            model.update(new)
        else:
            doomed = [rng.randrange(1, 500) for _ in range(rng.randrange(1, 20))]
            popped = sorted(slots.pop(doomed).tolist())
            assert popped == sorted(model.pop(i) for i in set(doomed) if i in model)
        probe = [rng.randrange(0, 510) for _ in range(30)]
        assert slots.slots_of(probe) == {i: model[i] for i in probe if i in model}
        assert len(slots) == len(model)
        assert slots.max_id == max(model, default=0)
    assert dict(slots.items()) == model
    assert slots.ids() == set(model)
    assert SlotMap.of(list(model), list(model.values())).slots_of(model) == model
