"""bench/embed_tune.py and bench/cross_encoder_cost.py: the fine-tune trains on text no relevance
set reads, never makes a query its own negative, and the cross-encoder's price is read from
real memories through the shipped model.

Why: a model fine-tuned on a split a relevance set measures would report recall that is not
held out; a batch holding one query twice would push a true evidence turn away as a
negative; and the cross-encoder's cost stands for a lever the issue names, so it must come
from the model and the memories the service has, not from a guess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import cross_encoder_cost, embed_tune
from tests.conftest import run_bench, store_of_titles

SAID = "we should move the remote control's buttons to the other side of the case"


def write_meeting(folder: Path, name: str, turns: list[str], queries: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    transcript = [{"speaker": f"Person {i}", "content": text} for i, text in enumerate(turns)]
    meeting = {"meeting_transcripts": transcript, "specific_query_list": queries}
    (folder / name).write_text(json.dumps(meeting), encoding="utf-8")


def test_pairs_come_from_the_train_split_spans_as_memories_read(tmp_path: Path) -> None:
    turns = ["Okay .", SAID, "the budget {disfmarker} is twelve and a half euros per unit", "x"]
    asked = {"query": "What  did they say about the buttons?", "relevant_text_span": [["0", "2"]]}
    write_meeting(tmp_path / "train", "ES2002a.json", turns, [asked])
    write_meeting(tmp_path / "test", "ES2004a.json", [SAID], [asked])
    write_meeting(tmp_path / "val", "Bed003.json", [SAID], [asked])

    pairs = embed_tune.span_pairs(tmp_path)

    # one query (the test and val meetings unread), its span's turns as memories are stored
    # ("<speaker>: <text>"), the filler and the turn past the span left out
    assert pairs == [
        (
            "What did they say about the buttons?",
            [
                f"Person 1: {SAID}",
                "Person 2: the budget is twelve and a half euros per unit",
            ],
        )
    ]


def test_a_batch_never_holds_one_query_twice_nor_a_pass_one_query_twice() -> None:
    pairs = [(f"query {q}", [f"turn {q}.{t}" for t in range(3)]) for q in range(10)]

    dealt = embed_tune.batches(pairs, size=4, steps=5)

    assert [len(b) for b in dealt] == [4] * 5
    for batch in dealt:
        queries = [q for q, _ in batch]
        assert len(set(queries)) == len(queries)
        for query, turn in batch:
            assert turn.startswith(query.replace("query", "turn") + ".")
    # a pass of ten queries fills two batches of four with eight distinct ones
    first_pass = [q for b in dealt[:2] for q, _ in b]
    assert len(set(first_pass)) == 8


def test_the_pair_length_is_the_median_of_real_memories(tmp_path: Path) -> None:
    titles = [f"memory {i} " + "word " * (i % 7) for i in range(200)]
    with store_of_titles(tmp_path / "workbench.db", titles):
        pass

    tokens = cross_encoder_cost.memory_tokens(tmp_path / "workbench.db")

    assert 3 <= tokens <= 12  # "memory N" plus up to six words, each a word piece or two


def test_the_price_table_runs_the_shipped_model_over_pairs() -> None:
    argv = ["--memory-tokens", "8", "--depths", "2", "3", "--layers", "6", "--repeats", "1"]
    proc = run_bench("bench/cross_encoder_cost.py", *argv)

    assert proc.returncode == 0, proc.stderr
    assert "pairs of 23 word pieces: query 12 + memory 8 (given) + 3" in proc.stdout
    rows = [line.split() for line in proc.stdout.splitlines() if line.split()[:1] == ["6"]]
    assert [row[1] for row in rows] == ["query", "2", "3"]
    assert all(float(row[2]) > 0 for row in rows)


def test_shares_give_each_source_its_steps_of_every_round_in_its_own_deal() -> None:
    meetings = [(f"meeting q{q}", [f"meeting t{q}.{t}" for t in range(3)]) for q in range(12)]
    scenes = [(f"scene q{q}", [f"scene t{q}"]) for q in range(8)]

    dealt = embed_tune.mixed([meetings, scenes], size=4, steps=9, shares=[2, 1])

    # rounds of two meeting batches then one scene batch; a batch holds one source only
    kinds = [{q.split()[0] for q, _ in batch} for batch in dealt]
    assert kinds == [{"meeting"}, {"meeting"}, {"scene"}] * 3
    # each source's batches are its own deal, in order (seed = the source's place)
    own = embed_tune.batches(meetings, 4, 6, seed=0, distinct=True)
    assert [b for b, k in zip(dealt, kinds, strict=True) if k == {"meeting"}] == own
    # equal shares are the default: the sources simply take turns
    assert embed_tune.mixed([meetings, scenes], 4, 4) == embed_tune.mixed(
        [meetings, scenes], 4, 4, shares=[1, 1]
    )


def test_data_names_sources_with_whole_shares() -> None:
    assert embed_tune.parsed_data("qmsum:2, friends") == [("qmsum", 2), ("friends", 1)]
    assert embed_tune.parsed_data("qmsum") == [("qmsum", 1)]


@pytest.mark.parametrize("bad", ["", "qmsum:0", "qmsum:x", "qmsum,qmsum", "meetings", "qmsum:-1"])
def test_data_refuses_unknown_repeated_or_empty_sources_and_bad_shares(bad: str) -> None:
    with pytest.raises(ValueError, match="source"):
        embed_tune.parsed_data(bad)


def test_the_adoption_check_corrects_for_its_many_cells() -> None:
    """32 cells, one at -2.2 SE (stop 52's musique vector MRR): beyond 2 SE, but not worse by
    Holm over the family; a cell at -4.5 SE is, and a worse one alone is found at once."""
    from bench.embed_recall import holm_worse, worse_p

    level = [(f"cell {n}", 0.0, 0.02) for n in range(31)]
    edge = ("musique vector MRR", -0.058, 0.026)
    assert edge[1] < -2 * edge[2]
    assert holm_worse([*level, edge]) == []
    far = ("meetings hybrid R@10", -0.045, 0.010)
    assert holm_worse([*level, edge, far]) == ["meetings hybrid R@10"]
    assert holm_worse([edge]) == ["musique vector MRR"]  # one test: alpha itself
    assert worse_p(-0.01, 0.0) == 0.0
    assert worse_p(0.01, 0.0) == 1.0
    assert worse_p(0.0, 0.0) == 0.5
    assert worse_p(-0.02, 0.01) == pytest.approx(0.02275, abs=1e-4)
