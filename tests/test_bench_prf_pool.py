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

from bench import relevance_ltr, relevance_prf_pool, relevance_readings
from bench import relevance_prf_pool as prf
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


def test_kept_head_rows_are_todays_so_the_head_order_cannot_move_whatever_the_wider_list() -> None:
    raw = _raw()
    cover = FEATURES.index("cover")
    for n, row in enumerate(raw["rows"]["d30"][1]):  # type: ignore[index]
        row[cover] = (n * 7 % 30) / 30  # today's head order, unlike the fused one
    for n, row in enumerate(raw["rows"]["src"][1]):  # type: ignore[index]
        row[cover] = n / 32  # over the wider list the same column reads otherwise
    today = [1.0 if f == "cover" else 0.0 for f in FEATURES]
    (head_only,) = relevance_prf_pool.items([raw], "d30")
    alone = relevance_ltr.reorder(head_only, relevance_prf_pool.KEY, today)[:30]
    (moved,) = relevance_prf_pool.frozen_items([raw], "src")
    (kept,) = relevance_prf_pool.frozen_items([raw], "src", keep_head=True)
    head = set(raw["rows"]["d30"][0])  # type: ignore[index]
    got = relevance_ltr.reorder(moved, relevance_prf_pool.KEY, [*today, 0.0, 0.0])
    assert [i for i in got if i in head] != alone  # the wider list's rows reorder the head
    for added in ((0.0, 0.0), (-3.0, 9.0), (0.4, 0.4)):
        got = relevance_ltr.reorder(kept, relevance_prf_pool.KEY, [*today, *added])
        assert [i for i in got if i in head] == alone
    ids, rows = kept.rows[relevance_prf_pool.KEY]
    assert rows[-1][len(FEATURES) :] == [1.0, 0.9]  # the additions keep their own rows
    assert rows[-1][cover] == pytest.approx(31 / 32)


def _g(**over: object) -> dict[str, object]:
    g: dict[str, object] = {
        "fused": [10, 11, 12, 13, 20, 21, 22, 23, 24, 25, 26],
        "fused_scores": [0.8, 0.6, 0.5],
        "vector_scores": [0.9, 0.85, 0.1],
        "query": "where did we meet",
    }
    return {**g, **over}


def test_gate_inputs_read_the_fused_and_vector_leads_the_first_sessions_share_and_identifiers() -> (
    None
):
    session_of = dict.fromkeys((10, 11, 12, 13), "s1") | dict.fromkeys(range(20, 27), "s2")
    x = prf.gate_inputs(_g(), session_of)
    assert x.margin == pytest.approx(0.25)  # (0.8 - 0.6) / 0.8
    assert x.vmargin == pytest.approx(0.05)
    assert x.share == pytest.approx(0.4)  # 4 of the top 10 (the 11th is not read) in s1
    assert x.ident is False
    assert prf.gate_inputs(_g(query="why does check_token fail"), session_of).ident is True
    alone = prf.gate_inputs(_g(fused=[10], fused_scores=[0.8], vector_scores=[]), session_of)
    assert (alone.margin, alone.vmargin, alone.share) == (1.0, 1.0, 1.0)
    zero = prf.gate_inputs(_g(fused_scores=[0.0, 0.0]), {})
    assert (zero.margin, zero.share) == (0.0, 0.0)  # no score, no known session


def test_each_gate_opens_on_its_literal_side_of_the_threshold() -> None:
    x = prf.GateInputs(margin=0.1, vmargin=0.02, share=0.4, ident=False)
    assert prf.gate_open("margin", 0.15, x)
    assert not prf.gate_open("margin", 0.1, x)
    assert prf.gate_open("vmargin", 0.03, x)
    assert not prf.gate_open("vmargin", 0.02, x)
    assert prf.gate_open("share_below", 1.0, x)
    assert not prf.gate_open("share_below", 0.4, x)
    assert prf.gate_open("share_atleast", 0.4, x)
    assert not prf.gate_open("share_atleast", 0.5, x)
    assert prf.gate_open("noident", 0.0, x)
    assert not prf.gate_open("noident", 0.0, prf.GateInputs(0.1, 0.02, 0.4, True))
    assert prf.gate_open("noident_margin", 0.15, x)
    assert not prf.gate_open("noident_margin", 0.15, prf.GateInputs(0.1, 0.02, 0.4, True))
    assert not prf.gate_open("noident_margin", 0.05, x)
    assert not prf.gate_open(*prf.CLOSED, x)
    with pytest.raises(ValueError, match="use one of"):
        prf.gate_open("sometimes", 0.5, x)
    assert prf.gate_grid("margin")[0] == prf.CLOSED
    assert {k for k, _ in prf.gate_grid("any")} == {"closed", *prf.GATES}


_FAR = [90, 91, 92, 93, 94, 95, 96, 97, 1]  # fts and vector alone: the gold (1) at place 9


def _item(s: str, gold: frozenset[int] = frozenset({1})) -> relevance_ltr.Item:
    return relevance_ltr.Item(s, "c", gold, list(_FAR), list(_FAR), list(_FAR), {}, {})


def _at(place: int) -> list[int]:
    """An order with the gold (1) at ``place`` (1-based)."""
    rest = [90, 91, 92, 93, 94, 95, 96, 97, 98]
    return rest[: place - 1] + [1] + rest[place - 1 :]


def _pairs(
    its: list[relevance_ltr.Item], orders: dict[int, tuple[list[int], list[int]]]
) -> dict[int, prf.Pair]:
    return {
        n: tuple(relevance_readings.read(o, its[n].gold) for o in pair)  # type: ignore[misc]
        for n, pair in orders.items()
    }


def test_the_gate_is_chosen_where_the_additions_help_and_the_threshold_that_keeps_the_rest() -> (
    None
):
    its = [_item("a") for _ in range(4)]
    inputs = [prf.GateInputs(m, 0.1, 0.5, False) for m in (0.01, 0.04, 0.2, 0.5)]
    # Without the additions the gold is 3rd; with them 1st on the two unclear questions
    # (margins 0.01, 0.04), 4th on the two with a clear fused first.
    orders = {n: (_at(3), _at(1) if n < 2 else _at(4)) for n in range(4)}
    part = {"a": dict.fromkeys(prf.FIGURES, 0.0)}
    got = prf.choose_gate(its, range(4), _pairs(its, orders), inputs, part, prf.gate_grid("any"))
    assert got == ("margin", 0.05)  # opens for exactly the two (0.02 opens one, 0.15 the same)
    same = {n: (_at(3), _at(3)) for n in range(4)}
    tie = prf.choose_gate(its, range(4), _pairs(its, same), inputs, part, prf.gate_grid("any"))
    assert tie == prf.CLOSED  # nothing to gain: today's stage


def test_a_gate_that_raises_the_balanced_mean_but_costs_a_figure_beyond_the_tolerance_loses() -> (
    None
):
    its = [_item("a", frozenset({1, 2}))]
    closed = [1, 90, 91, 92, 93, 94, 95, 96, 97, 98, 2]  # R@5 .5, R@10 .5, MRR 1: balanced .67
    opened = [90, 1, 2, 91]  # R@5 1, R@10 1, MRR .5: balanced .83, but MRR -0.5
    pairs = _pairs(its, {0: (closed, opened)})
    part = {"a": dict.fromkeys(prf.FIGURES, 0.0)}
    inputs = [prf.GateInputs(0.01, 0.1, 0.5, False)]
    assert prf.choose_gate(its, [0], pairs, inputs, part, prf.gate_grid("margin")) == prf.CLOSED
    mine = prf.set_figures(its, [0], [pairs[0][1]])
    today = prf.set_figures(its, [0], [pairs[0][0]])
    assert mine["balanced"] > today["balanced"]
    assert prf.penalty(mine, today, part["a"]) == pytest.approx(0.5 - relevance_ltr.TOLERANCE)
    assert prf.penalty(today, today, {**part["a"], "mrr": 1.0, "r5": 0.75}) == pytest.approx(0.25)


def test_each_sets_gate_is_chosen_on_the_other_sets_never_its_own() -> None:
    its = [_item(s) for s in ("a", "b") for _ in range(4)] + [_item("c") for _ in range(4)]
    margins = [0.01, 0.04, 0.2, 0.5] * 2 + [0.01] * 4
    inputs = [prf.GateInputs(m, 0.1, 0.5, False) for m in margins]
    outer = [(_at(3), _at(1) if m < 0.05 else _at(4)) for m in margins[:8]]
    outer += [(_at(1), _at(2))] * 4  # set c: the additions always cost a place
    inner = {s: {n: outer[n] for n, it in enumerate(its) if it.set != s} for s in "abc"}
    orders, chosen = prf.held_out_gate(its, outer, inner, inputs, {}, "margin")
    # c's own questions argue for closing (MRR 1 -> 0.5), but a and b chose for it:
    assert chosen["c"] == ("margin", 0.05, 1.0)
    assert orders[8:] == [_at(2)] * 4
    # a is chosen on b (open helps) and c (every margin opens c's, beyond the tolerance):
    assert chosen["a"][:2] == prf.CLOSED
    assert chosen["b"][:2] == prf.CLOSED
    assert orders[:8] == [_at(3)] * 8


def test_breaches_name_each_figure_below_the_better_part_or_beyond_the_tolerance() -> None:
    flat = dict.fromkeys((*prf.FIGURES, "balanced"), 0.5)
    rows = {
        "a": {
            "fts": {**flat, "mrr": 0.6},
            "vector": flat,
            "d30": {**flat, "mrr": 0.654, "r5": 0.6},
            "gated": {**flat, "mrr": 0.65, "r5": 0.594},
        }
    }
    got = prf.breaches(rows, "gated")
    assert got == ["a r5 0.594 < d30 0.600 - 0.005"]
    rows["a"]["gated"]["mrr"] = 0.59
    rows["a"]["vector"]["hit10"] = 0.6  # today's stage (0.5) is below vector alone too
    assert prf.breaches(rows, "gated") == [
        "a r5 0.594 < d30 0.600 - 0.005",
        "a mrr 0.590 < part 0.600",
        "a mrr 0.590 < d30 0.654 - 0.005",
        "a hit10 0.500 < part 0.600 (d30 too)",
    ]


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
    # What a per-query gate reads, as the engine had it: the fused head's scores, best first,
    # and the vector part's first two cosines.
    assert got["query"] == "garden tomato"
    scores = got["fused_scores"]
    assert len(scores) == relevance_prf_pool.GATE_DEPTH
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > 0
    assert len(got["vector_scores"]) == 2
    assert got["vector_scores"][0] >= got["vector_scores"][1]
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
