"""bench/embed_student.py: the student starts from the layers asked for, and trains on text no
relevance set reads.

Why: the layers a student keeps decide where it starts (untrained, MiniLM's layers 0,4,5 give
pooled vectors at cosine 0.67 to the full model's, its first three 0.31), and its training
texts must stay out of the sets that measure it, or its recall figures would not be held out.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench import embed_student


def write_meeting(folder: Path, name: str, turns: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    transcript = [{"speaker": "A", "content": text} for text in turns]
    (folder / name).write_text(json.dumps({"meeting_transcripts": transcript}), encoding="utf-8")


def test_meeting_turns_come_from_the_train_split_only(tmp_path: Path) -> None:
    long = "we should move the remote control's buttons {disfmarker} to the other side"
    write_meeting(tmp_path / "train", "ES2002a.json", [long, "Okay .", long, "x" * 900])
    write_meeting(tmp_path / "test", "ES2004a.json", ["a test meeting turn that sets measure"])
    write_meeting(tmp_path / "val", "Bed003.json", ["a validation turn the committee set reads"])

    turns = embed_student.meeting_turns(100, tmp_path)

    # once each, the disfluency mark gone, too short and too long turns left out
    assert turns == ["we should move the remote control's buttons to the other side"]


def test_a_mixed_corpus_interleaves_code_and_dialogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    talk = [f"meeting turn number {i} about the budget of the project" for i in range(5)]
    write_meeting(tmp_path / "train", "TS3005a.json", talk)
    monkeypatch.setattr(embed_student, "corpus", lambda n: [f"doc {i}" for i in range(n)])

    assert embed_student.mixed(6, tmp_path) == [
        "doc 0",
        talk[0],
        "doc 1",
        talk[1],
        "doc 2",
        talk[2],
    ]


def test_the_student_keeps_the_layers_it_is_given() -> None:
    torch = pytest.importorskip("torch")
    from transformers import AutoModel

    from workbench.recall.embed import minilm_dir

    if not minilm_dir().exists():
        pytest.skip("the MiniLM package is not installed")
    full = AutoModel.from_pretrained(str(minilm_dir()))
    # No text: no step is taken, so the student is the kept layers as they are.
    student = embed_student.distil([0, 4, 5], [], np.zeros((0, 384)), 1, 32, 1e-4)

    assert student.config.num_hidden_layers == 3
    assert len(student.encoder.layer) == 3
    for mine, theirs in zip(student.encoder.layer, (0, 4, 5), strict=True):
        for name, weight in mine.state_dict().items():
            assert torch.equal(weight, full.encoder.layer[theirs].state_dict()[name]), name
