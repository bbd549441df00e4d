"""Fuzz: the second stage's chunked tokenizing gives the whole text's word pieces, for any text.

``rerank_maxsim._encode`` tokenizes a text chunk by chunk (split at spaces, tabs and newlines,
each chunk kept) instead of whole (issue 21). For any text (any characters, the blanks and
controls the tokenizer cleans, accents, other scripts, its special tokens, long words), cold
or with its chunks already seen, the ids are the first ``MAX_PIECES`` the tokenizer gives the
whole text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from tests.fuzz_strategies import tokenizer_texts
from workbench.recall import rerank_maxsim, rerank_tokens

pytestmark = pytest.mark.slow

text = tokenizer_texts(40)


@settings(
    max_examples=budget(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(texts=st.lists(text, min_size=1, max_size=6), warm=st.booleans())
def test_chunked_ids_are_the_whole_texts_ids(
    installed_static_model: Path, texts: list[str], warm: bool
) -> None:
    table = rerank_tokens.load_static(installed_static_model)
    if not warm:
        rerank_maxsim.clear_cache()
    encoded = table.tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    want = [list(found.ids[: rerank_maxsim.MAX_PIECES]) for found in encoded]
    assert rerank_maxsim._encode(table, texts) == want
