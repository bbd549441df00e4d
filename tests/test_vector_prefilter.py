"""The vector prefilter (``recall/vector_prefilter.py``): coarse 4-bit codes scanned first, the
exact index scoring only their candidates (issue 21: the fp16 scan was the longest part of a
hybrid search and of the timeline's anchor at 100k).

Real FAISS on clustered vectors (approximate lists mean nothing on random ones), one index
with a prefilter beside a twin without, fed the same adds and removals:

- the codes are built from ``prefilter_from`` live vectors, kept in step with every add,
  dropped by a compaction and rebuilt by the next ``prepare_prefilter``, rebuilt again when
  the index has doubled, and each install changes the index's version (the anchor memo);
- a prefiltered search scores every hit exactly as the full scan does (the same bits) and,
  on these clusters, returns the full scan's list for all but a few of 300 queries;
- a filter keeping too small a share, or a list too long for the candidates, scans exactly;
- the settings reach the service's index (``vector_prefilter`` off: no codes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import clustered_vectors
from workbench.recall import vector_prefilter
from workbench.recall.vectors import VectorIndex

N = 6000
DIM = 32
NAMES = ["a", "b", "c"]


def twins(n: int = N, prefilter_from: int = 1000) -> tuple[VectorIndex, VectorIndex, Any]:
    """(prefiltered, exact, vectors): two fp16 indexes over the same ``n`` clustered vectors."""
    matrix = clustered_vectors(n, DIM, clusters=200, spread=0.35, seed=9)
    ids = list(range(1, n + 1))
    projects = [NAMES[i % 7 % 3] for i in ids]  # a ~43%, b ~29%, c ~29%
    fast = VectorIndex("m", DIM, "fp16", prefilter_from=prefilter_from)
    exact = VectorIndex("m", DIM, "fp16")
    for index in (fast, exact):
        index.add(ids, [f"h{i}" for i in ids], matrix, projects=projects)
    return fast, exact, matrix


def queries(matrix: Any, count: int = 300, noise: float = 0.3, seed: int = 3) -> Any:
    rng = np.random.default_rng(seed)
    rows = matrix[rng.integers(0, len(matrix), count)]
    q = rows + noise * rng.normal(size=rows.shape) / np.sqrt(matrix.shape[1])
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def test_codes_are_built_from_the_threshold_and_searches_use_them() -> None:
    few, _, _ = twins(n=900, prefilter_from=1000)
    assert not few.prepare_prefilter()
    assert not few.prefiltered
    fast, _, _ = twins()
    version = fast.version
    assert fast.prepare_prefilter()
    assert fast.prefiltered
    assert fast.version != version  # lists may differ: a remembered anchor is not reused
    assert not fast.prepare_prefilter()  # nothing changed: not built again
    assert fast.memory_bytes() > VectorIndex("m", DIM, "fp16").memory_bytes()


def test_a_tiny_index_never_trains_codes_whatever_the_setting() -> None:
    """``vector_prefilter_from`` 0 on a new memory: ten vectors cannot train 16 centroids per
    sub-quantiser (FAISS raises), and the indexer's pass must not fail for it."""
    tiny, exact, matrix = twins(n=10, prefilter_from=0)
    assert not tiny.prepare_prefilter()
    assert not tiny.prefiltered
    assert tiny.search(matrix[3], 5) == exact.search(matrix[3], 5)


def test_a_prefiltered_search_scores_exactly_and_keeps_the_full_scans_list() -> None:
    fast, exact, matrix = twins()
    fast.prepare_prefilter()
    same = 0
    for q in queries(matrix):
        got, truth = fast.search(q, 50), exact.search(q, 50)
        cosine = dict(exact.search(q, N))
        assert all(s == cosine[i] for i, s in got)  # the same bits, not approximately
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        same += got == truth
    assert same >= 294, f"only {same} of 300 lists equal the full scan's"


def test_tied_scores_keep_the_hits_the_full_scan_keeps() -> None:
    """Memories with the same text share a vector, so their scores tie. The prefilter's
    candidates are scored by the index's own scan restricted to them, in slot order as the
    full scan reads them, so a list cut inside a tied group keeps the same members (the
    earliest slots) and the same bits."""
    base = clustered_vectors(N, DIM, clusters=100, spread=0.35, seed=12)  # a filter of all:
    # more than SUBSET_EXACT slots, so the filtered search takes the prefilter too
    matrix = np.vstack([base, np.repeat(base[:40:8], 12, axis=0)])  # 5 texts, 12 copies each
    ids = list(range(1, len(matrix) + 1))
    fast = VectorIndex("m", DIM, "fp16", prefilter_from=1000)
    exact = VectorIndex("m", DIM, "fp16")
    for index in (fast, exact):
        index.add(ids, [f"h{i}" for i in ids], matrix, projects=["a"] * len(ids))
    assert fast.prepare_prefilter()
    for row in range(0, 40, 8):
        q = base[row] / np.linalg.norm(base[row])
        for k in (3, 7, 12, 13, 20):
            assert fast.search(q, k) == exact.search(q, k), (row, k)
            assert fast.search(q, k, projects=["a"]) == exact.search(q, k, projects=["a"])


def test_adds_keep_the_codes_in_step_and_removals_are_never_returned() -> None:
    fast, exact, matrix = twins()
    fast.prepare_prefilter()
    more = clustered_vectors(500, DIM, clusters=200, spread=0.35, seed=10)
    new_ids = list(range(N + 1, N + 501))
    for index in (fast, exact):
        index.add(new_ids, [f"n{i}" for i in new_ids], more, projects=["a"] * 500)
        index.remove(range(1, 400))
    assert fast.prefiltered  # the codes grew with the index
    gone = set(range(1, 400))
    for q in queries(np.vstack([matrix, more]), count=100):
        got = fast.search(q, 30)
        assert not gone & {i for i, _ in got}
        cosine = dict(exact.search(q, N + 500))
        assert all(s == cosine[i] for i, s in got)


def test_a_compaction_drops_the_codes_and_the_next_pass_builds_them_again() -> None:
    fast, _, matrix = twins()
    fast.prepare_prefilter()
    fast.remove(range(1, 4001))  # 4,000 dead of 6,000: more dead than live
    fast.add([9001], ["x"], matrix[:1], projects=["a"])  # an add compacts
    assert fast.dead == 0
    assert not fast.prefiltered
    assert fast.prepare_prefilter()
    assert fast.prefiltered
    assert {i for i, _ in fast.search(matrix[5000], 5)} <= set(range(4001, 9002))


def test_the_codes_are_retrained_when_the_index_has_doubled() -> None:
    fast, _, matrix = twins(n=3000, prefilter_from=1000)
    fast.prepare_prefilter()
    trained = fast._prefilter
    assert trained is not None
    assert trained.trained_on == 3000
    more = clustered_vectors(3001, DIM, clusters=200, spread=0.35, seed=11)
    ids = list(range(3001, 6002))
    fast.add(ids, [f"m{i}" for i in ids], more, projects=["b"] * len(ids))
    assert fast.prefiltered
    assert trained.stale(6001)
    assert fast.prepare_prefilter()
    rebuilt = fast._prefilter
    assert rebuilt is not None
    assert rebuilt is not trained
    assert rebuilt.trained_on == 6001


def test_narrow_filters_and_long_lists_scan_exactly() -> None:
    fast, exact, matrix = twins()
    fast.prepare_prefilter()
    share = 1 / 6000
    assert vector_prefilter.wanted(50, share, N) is None  # too narrow
    assert vector_prefilter.wanted(500, 1.0, N) is None  # 10,000 > 1/8 of N
    for q in queries(matrix, count=50):
        assert fast.search(q, 500) == exact.search(q, 500)  # the full scan, so equal
        for names in (["a"], ["b", "c"]):
            got = fast.search(q, 40, projects=names)
            allowed = dict(exact.search(q, N, projects=names))
            assert {i for i, _ in got} <= set(allowed)
            assert all(s == allowed[i] for i, s in got)


def test_other_kinds_and_odd_dimensions_never_prefilter() -> None:
    matrix = clustered_vectors(2000, 33, clusters=50, spread=0.3, seed=2)
    odd = VectorIndex("m", 33, "fp16", prefilter_from=10)
    odd.add(list(range(1, 2001)), [f"h{i}" for i in range(1, 2001)], matrix)
    assert odd.prefilter_from is None
    assert not odd.prepare_prefilter()
    for kind in ("hnsw_fp16", "sq8"):
        other = VectorIndex("m", DIM, kind, prefilter_from=10)
        assert other.prefilter_from is None


@pytest.mark.parametrize("enabled", [True, False])
def test_the_settings_reach_the_services_index(tmp_path: Path, enabled: bool) -> None:
    from workbench.recall.indexer import Indexer
    from workbench.settings import load_settings
    from workbench.store.database import Store

    settings = load_settings(
        tmp_path, embedder="none", vector_prefilter=enabled, vector_prefilter_from=7
    )
    store = Store(settings.db_path)
    try:
        options = Indexer(store, settings)._index_options()
        assert options["prefilter_from"] == (7 if enabled else None)
    finally:
        store.close()


@pytest.mark.slow
def test_a_service_builds_the_codes_and_answers_with_the_full_scans_scores(
    make_service: Any, data_dir: Path, installed_static_model: Path
) -> None:
    """The real service on a real store: its indexer thread builds the codes once the index
    holds ``vector_prefilter_from`` memories (``/api/index/status`` says so), and a search
    by meaning then gives every hit the score the service without codes gives it."""
    import urllib.parse

    from tests.test_vectors_switch import seeded, start, status, wait_complete

    n = 1500
    seeded(data_dir, n)
    asked = [f"{w} {h}" for w in ("cache", "socket", "parser", "token") for h in ("leaked", "grew")]

    def replies(prefilter: bool) -> list[list[tuple[int, float]]]:
        svc = start(
            lambda **env: make_service(
                **env,
                WORKBENCH_VECTOR_PREFILTER="true" if prefilter else "false",
                WORKBENCH_VECTOR_PREFILTER_FROM="500",
            ),
            installed_static_model,
            "fp16",
        )
        wait_complete(svc, n, "fp16")
        if prefilter:
            from tests.test_crash import wait_for

            wait_for(lambda: status(svc)["prefiltered"], timeout=60, what="the prefilter built")
        else:
            assert status(svc)["prefiltered"] is False
        got = []
        for query in asked:
            params = urllib.parse.urlencode(
                {"query": query, "mode": "vector", "format": "json", "limit": "20"}
            )
            code, body = svc.get(f"/api/search?{params}")
            assert code == 200, body
            got.append([(h["id"], h["score"]) for h in body["observations"]])
        svc.stop()
        return got

    plain, fast = replies(False), replies(True)
    for full, coarse in zip(plain, fast, strict=True):
        scores = dict(full)
        assert len(coarse) == len(full) == 20
        assert all(scores.get(i, s) == s for i, s in coarse)  # a shared hit: the same score
    assert sum(a == b for a, b in zip(plain, fast, strict=True)) >= len(asked) - 1


@pytest.mark.slow
def test_codes_wait_for_the_embedding_worker_to_finish_its_catch_up(
    make_service: Any, data_dir: Path, onnx_model: Path
) -> None:
    """A history imported at once: the MiniLM index passes the threshold while the worker is
    still embedding, and a build then would take CPU from the catch-up (100k quiet: 283 →
    295 s). The codes come once the worker is idle, and searches use them from then on."""
    from tests.conftest import store_of_titles
    from tests.test_crash import wait_for
    from tests.test_vectors_switch import titles

    n = 3000
    with store_of_titles(data_dir / "workbench.db", titles(n)):
        pass
    svc = make_service(
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_ONNX_MODEL_DIR=str(onnx_model),
        WORKBENCH_VECTOR_PREFILTER_FROM="1024",
    )
    seen: list[tuple[int, str, bool]] = []  # (indexed, worker state, prefiltered)

    def caught_up() -> bool:
        _, body = svc.get("/api/index/status")
        state = str((body.get("worker") or {}).get("state", ""))
        seen.append((int(body["indexed"]), state, bool(body["prefiltered"])))
        return bool(body["indexed"] == n and body["prefiltered"])

    wait_for(caught_up, timeout=180, what=f"{n} vectors and the prefilter")
    during = [s for s in seen if s[1] == "embedding" and 1024 <= s[0] < n]
    assert during, f"never saw the worker embed past the threshold: {seen[:5]}…"
    assert not any(prefiltered for _, _, prefiltered in during), during
