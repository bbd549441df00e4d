"""``bench/relevance_ltr.py --write`` refits the learned stage's weights: the page rules chosen
on top of them by their own benches (``session_cap``: bench/relevance_session_cap.py,
``session_keep``: bench/relevance_session_keep.py) must survive a refit, not vanish from the
shipped file without a word (issue 21: the shipped ``session_keep`` 7 keeps the learned
stage from falling below full text on a session figure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import relevance_ltr
from workbench.recall import rerank_learned


def fitted() -> dict[str, object]:
    return {"features": ["fused"], "weights": {"fused": 1.0}, "depth": 30, "demotion": 5}


def test_a_refit_keeps_the_page_rules_of_the_file_it_replaces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    previous = tmp_path / "rerank_learned.json"
    previous.write_text(
        json.dumps({**fitted(), "weights": {"fused": 0.2}, "session_cap": 3, "session_keep": 7}),
        encoding="utf-8",
    )
    shipped = relevance_ltr.shipped_weights(fitted(), previous)
    assert shipped["weights"] == {"fused": 1.0}  # the new fit, not the old one
    assert shipped["session_cap"] == 3
    assert shipped["session_keep"] == 7
    said = capsys.readouterr().err
    assert "session_keep" in said
    assert "relevance_session_keep.py --final" in said


def test_a_first_write_or_a_file_without_page_rules_adds_none(tmp_path: Path) -> None:
    assert relevance_ltr.shipped_weights(fitted(), tmp_path / "missing.json") == fitted()
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(fitted()), encoding="utf-8")
    assert relevance_ltr.shipped_weights(fitted(), bare) == fitted()


def test_the_shipped_file_names_every_page_rule_the_stage_reads() -> None:
    """The rules carried over are the ones ``rerank_learned`` reads from the file."""
    shipped = json.loads(rerank_learned.WEIGHTS_FILE.read_text(encoding="utf-8"))
    carried = set(relevance_ltr.PAGE_RULES)
    assert carried == {"session_cap", "session_keep"}
    assert carried & set(shipped) == {"session_keep"}
    assert rerank_learned.weights().session_keep == shipped["session_keep"]
