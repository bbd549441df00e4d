"""Forget empties the service's caches of memory text.

A search's second stage keeps what it read of its candidates between requests, so a warm
search costs little: each text's words and identifiers (``rerank_features``), each text's word
pieces and every chunk of text with its pieces (``rerank_maxsim``: the chunks are the words
themselves), the speaker labels (``rerank_learned``). A forgotten memory's words stayed there,
in the process, until enough other searches pushed them out. Real caches, filled by the real
functions a search calls; the real ``forget`` on a real store.
"""

from __future__ import annotations

from pathlib import Path

from tests.onnx_model import installed_static_model  # noqa: F401  (fixture)
from workbench import forget
from workbench.models import ObservationDraft
from workbench.recall import rerank_features, rerank_learned, rerank_maxsim, rerank_tokens
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

MARKER = "qjvcachemarker"
TEXT = f"Caroline: rotated the {MARKER} signing_key in payments-api"


def held_in_maxsim() -> bool:
    chunks = any(MARKER in chunk for known in rerank_maxsim._CHUNKS.values() for chunk in known)
    return chunks or bool(rerank_maxsim._CACHE)


def test_forget_empties_the_caches_of_memory_text(
    data_dir: Path,
    installed_static_model: Path,  # noqa: F811
) -> None:
    table = rerank_tokens.load_static(installed_static_model)
    with Store(data_dir / "workbench.db") as store:
        with atomic(store.conn):
            (observation_id, _) = observations.insert(
                store.conn, ObservationDraft(title=TEXT, narrative="done"),
                content_session_id="s", project="p",
            )  # fmt: skip
        # What a search's second stage reads of this candidate.
        rerank_features.words(TEXT)
        rerank_features.identifiers(TEXT)
        rerank_learned.speaker_words(TEXT)
        rerank_maxsim.content_pieces(table, [TEXT])
        assert rerank_features._words.cache_info().currsize
        assert rerank_features._identifiers.cache_info().currsize
        assert rerank_learned._label_words.cache_info().currsize
        assert held_in_maxsim()

        report = forget.forget(store.conn, data_dir / "spool", [observation_id])
        assert [d.id for d in report.deleted] == [observation_id]

    assert rerank_features._words.cache_info().currsize == 0
    assert rerank_features._identifiers.cache_info().currsize == 0
    assert rerank_features.stem.cache_info().currsize == 0
    assert rerank_learned._label_words.cache_info().currsize == 0
    assert not held_in_maxsim()
