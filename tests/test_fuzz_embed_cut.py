"""Fuzz: the query embedder's own cut gives the ids a truncating tokenizer gives, for any text.

``OnnxEmbedder`` shares one parsed tokenizer with the static tier (``embed.shared_tokenizer``,
issue 21: one copy per process), so it may not switch truncation on; ``token_ids`` cuts each
text to ``max_tokens`` itself (``embed.cut_ids``). For any texts (any characters, the
blanks and controls the tokenizer cleans, accents, other scripts, its special tokens written
out, long words) and any cut from 2 on, the ids are those of a tokenizer with
``enable_truncation(max_tokens)``: the model reads the same positions, so the vectors and
their cache rows stay the same.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from tests.fuzz_strategies import tokenizer_texts
from workbench.recall import embed

pytestmark = pytest.mark.slow

text = tokenizer_texts(60)


@functools.cache
def _reference(path: str) -> Any:
    """One tokenizer of the file for the reference ids (a parsed copy holds ~6-10 MiB, so not
    one per cut): its truncation is set before each use, on this one thread."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_padding()
    return tokenizer


def _truncating(path: str, cut: int) -> Any:
    tokenizer = _reference(path)
    tokenizer.enable_truncation(max_length=cut)
    return tokenizer


@functools.cache
def _embedder(path: str) -> embed.OnnxEmbedder:
    return embed.OnnxEmbedder(Path(path), threads=1)


@settings(
    max_examples=budget(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    texts=st.lists(text, min_size=1, max_size=6),
    cut=st.one_of(st.integers(2, 40), st.just(embed.ONNX_MAX_TOKENS)),
)
def test_the_embedders_cut_is_a_truncating_tokenizers(
    installed_onnx_model: Path, texts: list[str], cut: int
) -> None:
    """The embedder's own ids at its cut, and ``cut_ids`` (what it cuts with) at any other."""
    path = str(installed_onnx_model / "tokenizer.json")
    model = _embedder(str(installed_onnx_model))
    want = _truncating(path, model.max_tokens).encode_batch(texts)
    assert model.token_ids(texts) == [w.ids for w in want]
    whole = model._tokenizer.encode_batch(texts)
    want = _truncating(path, cut).encode_batch(texts)
    assert [embed.cut_ids(w.ids, cut) for w in whole] == [w.ids for w in want]
