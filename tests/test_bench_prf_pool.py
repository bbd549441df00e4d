"""The pieces ``bench/relevance_prf_pool.py`` builds its verdict on (PRF as a candidate source).

The bench's verdict is only as good as these: a source may add only ids the fused head lacks,
each once and at most ``m``; the ceiling must count a question whose gold any candidate holds;
the refit's rows must carry the moved query's cosine and flag exactly the added candidates,
a floor must keep those off the first places and nothing else, and the frozen fit's rows
must leave the head in today's order;
and, through the real engine on a real store with a real FAISS index and the installed static
model, the Rocchio source must stay within the question's project and the stage's rows must
cover the head plus what the source added.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import relevance_ltr, relevance_prf_pool
from bench.relevance_sets import IndexRanker, Loaded, Question
from workbench.models import ObservationDraft
from workbench.recall import rerank_tokens, vectors
from workbench.recall.embed import StaticEmbedder
from workbench.recall.rerank_learned import FEATURES
from workbench.store import observations as store_obs
from workbench.store.connection import atomic
from workbench.store.database import Store


def test_a_source_adds_only_what_the_head_lacks_once_each_and_at_most_m() -> None:
    head = [1, 2, 3]
    assert relevance_prf_pool.added(head, [2, 7, 1, 8, 7, 9], 2) == [7, 8]
    assert relevance_prf_pool.added(head, [2, 7, 1, 8, 7, 9]) == [7, 8, 9]
    assert relevance_prf_pool.added(head, [3, 1]) == []


def test_the_ceiling_counts_a_question_whose_gold_any_candidate_holds() -> None:
    raw = [
        {"set": "s", "gold": frozenset({40}), "fused": list(range(1, 61)), "adds": {"x": [99]}},
        {"set": "s", "gold": frozenset({2, 99}), "fused": list(range(1, 61)), "adds": {"x": [99]}},
    ]
    got = relevance_prf_pool.ceilings(raw)["s"]
    # d30: the first question's gold (place 40) is not among the head, the second's 2 is.
    assert got["d30"] == (0.5, 0.25, 0.0)
    assert got["x"] == (0.5, 0.5, 1.0)  # 99 adds the second's other gold, not the first's


def _raw() -> dict[str, object]:
    head = list(range(1, 31))
    adds = {"src": [50, 51]}
    row = [0.0] * len(FEATURES)
    return {
        "set": "s",
        "cls": "c",
        "gold": frozenset({51}),
        "fused": list(range(1, 61)),
        "fts": [],
        "vector": [],
        "adds": adds,
        "cos": {"src": {1: 0.5, 51: 0.9}, relevance_prf_pool.PRF_OF: {1: 0.2}},
        "rows": {
            "d30": (head, [list(row) for _ in head]),
            "src": ([*head, 50, 51], [list(row) for _ in range(32)]),
        },
    }


def test_the_refits_rows_carry_the_moved_querys_cosine_and_flag_the_added_candidates() -> None:
    (plain,) = relevance_prf_pool.items([_raw()], "src")
    ids, rows = plain.rows[relevance_prf_pool.KEY]
    assert ids[-2:] == [50, 51]
    assert {len(r) for r in rows} == {len(FEATURES)}  # today's columns only
    (wide,) = relevance_prf_pool.items([_raw()], "src+prf")
    ids, rows = wide.rows[relevance_prf_pool.KEY]
    extra = [r[len(FEATURES) :] for r in rows]
    assert extra[0] == [0.5, 0.0]  # a head candidate: its cosine with q', not added
    assert extra[-1] == [0.9, 1.0]  # reached by the source
    assert extra[-2] == [0.0, 1.0]  # no stored vector: cosine 0
    (head_only,) = relevance_prf_pool.items([_raw()], "d30+prf")
    ids, rows = head_only.rows[relevance_prf_pool.KEY]
    assert len(ids) == 30
    assert rows[0][len(FEATURES) :] == [0.2, 0.0]  # PRF_OF's q', nothing flagged added
    # The refit's order keeps every candidate once, the added ones too (51 is past fused 50).
    weights = [1.0 if f == "fused" else 0.0 for f in FEATURES] + [0.0, 5.0]
    order = relevance_ltr.reorder(wide, relevance_prf_pool.KEY, weights)
    assert order[:2] == [50, 51]
    assert sorted(order) == list(range(1, 61))


def test_a_floor_keeps_the_added_candidates_off_the_first_places_and_the_rest_in_order() -> None:
    order = [50, 1, 51, 2, 3]
    assert relevance_prf_pool.floored(order, {50, 51}, 2) == [1, 2, 50, 51, 3]
    assert relevance_prf_pool.floored(order, {50, 51}, None) == order
    assert relevance_prf_pool.floored(order, {50, 51}, 9) == [1, 2, 3, 50, 51]
    assert relevance_prf_pool.floored(order, set(), 3) == order


def test_frozen_rows_flag_only_the_additions_so_the_head_keeps_todays_order() -> None:
    raw = _raw()
    head_ids = raw["rows"]["d30"][0]  # type: ignore[index]
    for label in ("d30", "src"):  # the same head rows in both lists
        for n, row in enumerate(raw["rows"][label][1][:30]):  # type: ignore[index]
            row[FEATURES.index("cover")] = (n * 7 % 30) / 30  # a head order unlike the fused
    (frozen,) = relevance_prf_pool.frozen_items([raw], "src")
    ids, rows = frozen.rows[relevance_prf_pool.KEY]
    extra = [r[len(FEATURES) :] for r in rows]
    assert extra[0] == [0.0, 0.0]  # head: neither column, whatever its cosine with q'
    assert extra[-2:] == [[1.0, 0.0], [1.0, 0.9]]  # 50 (no vector), 51 (cosine 0.9 with q')
    today = [1.0 if f == "cover" else 0.0 for f in FEATURES]
    (head_only,) = relevance_prf_pool.items([raw], "d30")
    alone = relevance_ltr.reorder(head_only, relevance_prf_pool.KEY, today)
    for added in ((0.0, 0.0), (-3.0, 9.0), (0.4, 0.4)):
        got = relevance_ltr.reorder(frozen, relevance_prf_pool.KEY, [*today, *added])
        assert [i for i in got if i in set(head_ids)] == alone[:30]


@pytest.fixture
def loaded(tmp_path: Path, installed_static_model: Path) -> Loaded:
    store = Store(tmp_path / "pool.db")
    turns = [
        ("p", f"s{n // 5}", f"note {n} about the garden and the tomato beds") for n in range(40)
    ]
    turns += [("q", "t", f"other project note {n} about the garden") for n in range(10)]
    with atomic(store.conn):
        for n, (project, session, text) in enumerate(turns):
            store_obs.insert(
                store.conn,
                ObservationDraft(type="discovery", title=text),
                content_session_id=session,
                project=project,
                created_ms=1_700_000_000_000 + n * 60_000,
            )
    rows = store.conn.execute(
        "SELECT id, title, subtitle, narrative, facts, concepts FROM observations ORDER BY id"
    ).fetchall()
    texts = [vectors.embed_text(r) for r in rows]
    embedder = StaticEmbedder(installed_static_model)
    index = vectors.VectorIndex(embedder.name, embedder.dim, "flat")
    index.add(
        [int(r["id"]) for r in rows], [vectors.text_hash(t) for t in texts], embedder.embed(texts)
    )
    question = Question("c", "garden tomato", (int(rows[0]["id"]),), "p")
    return Loaded("pool", store, [question], IndexRanker("static", embedder, index), texts)


def test_the_rocchio_source_stays_in_the_questions_project_and_its_rows_cover_what_it_adds(
    loaded: Loaded, installed_static_model: Path
) -> None:
    table = rerank_tokens.load_static(installed_static_model)
    (got,) = relevance_prf_pool.collected(loaded, table)
    project = {
        int(i): str(p) for i, p in loaded.conn.execute("SELECT id, project FROM observations")
    }
    head = got["fused"][: relevance_prf_pool.HEAD]
    assert {project[i] for i in got["fused"]} == {"p"}
    key = relevance_prf_pool.rocchio_key(3, 0.85, 20)
    more = got["adds"][key]
    assert more, "project p has 40 memories: q' must reach some the head of 30 lacks"
    assert {project[i] for i in more} == {"p"}  # never the other project's
    assert not set(more) & set(head)
    ids, rows = got["rows"][key]
    assert ids == [*head, *more]
    assert {len(r) for r in rows} == {len(FEATURES)}
    assert set(got["cos"][key]) >= set(ids)  # every candidate has its cosine with q'
    assert got["rows"]["d30"][0] == head
    session = relevance_prf_pool.SESSION_WINDOW[0]
    near = got["adds"][f"session:n{session}"]
    assert not set(near) & set(head)
    first_session = {
        int(r[0])
        for r in loaded.conn.execute(
            "SELECT id FROM observations WHERE content_session_id ="
            " (SELECT content_session_id FROM observations WHERE id = ?)",
            [head[0]],
        )
    }
    assert set(near) <= first_session
