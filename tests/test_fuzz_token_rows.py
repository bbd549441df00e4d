"""Fuzz: a memory's kept words and pieces are what tokenizing its text now gives, for any text.

``observation_tokens`` (``recall.token_rows``, issue 21) keeps each memory's words for the
second stage, made once by the indexer. For any title, subtitle, narrative, facts and
concepts (any characters: the blanks and controls the tokenizer cleans, accents, other
scripts, its special tokens, CamelCase and identifiers, long words), the row written to a real
store and read back with the candidate (``load_texts``) gives the stemmed words of title and
body and MaxSim's pieces exactly as tokenizing the text now gives them, and MaxSim scores a
query the same with the row as without.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from tests.fuzz_strategies import tokenizer_texts
from workbench.models import ObservationDraft
from workbench.recall import rerank_features, rerank_maxsim, rerank_tokens, token_rows
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow

camel = st.sampled_from(["ReviewBuildWorker", "XMLHttpRequest", "check_token", "payments-api"])
text = st.one_of(
    tokenizer_texts(30), st.lists(camel | tokenizer_texts(4), max_size=6).map(" ".join)
)


@settings(
    max_examples=budget(120),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    title=text,
    subtitle=text,
    narrative=text,
    facts=st.lists(text, max_size=3),
    concepts=st.lists(text, max_size=3),
    query=text,
)
def test_a_kept_row_reads_back_as_tokenizing_the_text_now(
    installed_static_model: Path,
    title: str,
    subtitle: str,
    narrative: str,
    facts: list[str],
    concepts: list[str],
    query: str,
) -> None:
    table = rerank_tokens.load_static(installed_static_model)
    draft = ObservationDraft(
        title=title, subtitle=subtitle, narrative=narrative, facts=facts, concepts=concepts
    )
    with tempfile.TemporaryDirectory() as where, Store(Path(where) / "workbench.db") as store:
        with atomic(store.conn):
            observation_id, _ = observations.insert(
                store.conn, draft, content_session_id="s", project="p"
            )
        assert token_rows.fill(store.conn, table).written == 1
        found = rerank_features.load_texts(store.conn, [observation_id])[observation_id]
    live = (rerank_features.words_of(found["title"]), rerank_features.words_of(found["body"]))
    assert found.get("words") == live
    candidate = rerank_maxsim.candidate_text(found)
    known = rerank_maxsim.known_pieces(table, {observation_id: found})
    rerank_maxsim.clear_cache()
    assert known == {candidate: rerank_maxsim.fresh_pieces(table, [candidate])[0]}
    rerank_maxsim.clear_cache()
    plain = rerank_maxsim.scores(table, query, [candidate, "a vaguer memory"])
    assert rerank_maxsim.scores(table, query, [candidate, "a vaguer memory"], known) == plain
