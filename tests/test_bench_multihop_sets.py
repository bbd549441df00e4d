"""The multi-hop relevance sets (``bench/relevance_set_multihop.py``): evidence spans sessions.

Issue 21's held-out benchmark asks multi-hop questions whose evidence was said in different
sessions; these sets exist to judge the session levers on that shape, so the one property that
must hold is that a question's supporting sentences are stored in different sessions, and that
the gold is the release's sentences (HotpotQA) or the hop answer's sentence (MuSiQue). Small
files in the releases' own formats, written here, stand in for the downloads.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import relevance_set_multihop as multihop
from bench import relevance_sets


def _hotpot_question(n: int) -> dict[str, object]:
    context = [
        [f"Title {n}-{p}", [f"Paragraph {p} of question {n} opens.", f" It holds fact {n}.{p}."]]
        for p in range(4)
    ]
    return {
        "_id": f"q{n}",
        "type": "bridge" if n % 2 else "comparison",
        "question": f"Which fact links   question {n}?",
        "answer": "x",
        "level": "easy",
        "context": context,
        "supporting_facts": [[f"Title {n}-1", 1], [f"Title {n}-3", 0]],
    }


def test_a_hotpot_questions_supporting_sentences_are_turns_of_different_sessions(
    tmp_path: Path,
) -> None:
    raw = [_hotpot_question(n) for n in range(3)]
    (tmp_path / multihop.FILES["hotpot"]).write_text(json.dumps(raw), encoding="utf-8")

    turns, questions = multihop.build("hotpot", tmp_path)

    assert len(turns) == 3 * 4 * 2  # one turn per sentence, nothing dropped
    assert [q.cls for q in questions] == ["comparison", "bridge", "comparison"]
    assert questions[1].text == "Which fact links question 1?"  # spaces folded
    for n, q in enumerate(questions):
        said = sorted(turns[i].text for i in q.evidence)
        assert said == [f"It holds fact {n}.1.", f"Paragraph 3 of question {n} opens."]
        assert len({turns[i].session for i in q.evidence}) == 2
        assert {turns[i].project for i in q.evidence} == {q.project}
    # Later turns are later in time: sessions a day apart, turns a minute apart.
    assert [t.created_ms for t in turns] == sorted(t.created_ms for t in turns)


def test_a_musique_hops_gold_is_the_sentence_holding_its_answer(tmp_path: Path) -> None:
    paragraphs = [
        {
            "idx": 0,
            "title": "A",
            "paragraph_text": "Noise here. More noise.",
            "is_supporting": False,
        },
        {
            "idx": 1,
            "title": "Journal",
            "paragraph_text": "The journal is old. It is published by the Guild of Owls.",
            "is_supporting": True,
        },
        {
            "idx": 2,
            "title": "Guild",
            "paragraph_text": "The Guild of Owls met in St. Louis. Its first head was G. Hall.",
            "is_supporting": True,
        },
    ]
    raw = [
        {
            "id": "2hop__1_2",
            "question": "Who first headed the publisher of the journal?",
            "answer": "G. Hall",
            "answer_aliases": [],
            "answerable": True,
            "paragraphs": paragraphs,
            "question_decomposition": [
                {
                    "question": "Who publishes the journal?",
                    "answer": "Guild of Owls",
                    "paragraph_support_idx": 1,
                },
                {
                    "question": "Who was the first head of #1?",
                    "answer": "G. Hall",
                    "paragraph_support_idx": 2,
                },
            ],
        }
    ]
    (tmp_path / multihop.FILES["musique"]).write_text(json.dumps(raw), encoding="utf-8")

    turns, [question] = multihop.build("musique", tmp_path)

    assert question.cls == "2hop"
    assert sorted(turns[i].text for i in question.evidence) == [
        "It is published by the Guild of Owls.",
        "Its first head was G. Hall.",  # "G." is an initial, not a sentence's end
    ]
    assert len({turns[i].session for i in question.evidence}) == 2


def test_the_sets_are_registered_and_skipped_with_the_fix_when_their_files_are_absent(
    tmp_path: Path,
) -> None:
    assert {"hotpot", "musique"} <= set(relevance_sets.ALL_SETS)
    assert relevance_sets.CLASSES["musique"] == ("2hop", "3-4hop")
    why = multihop.available(tmp_path, "musique")
    assert why is not None
    assert str(tmp_path) in why
    assert "OSU-NLP-Group/HippoRAG" in why
