"""The second stage tokenizes each chunk of text once (issue 21: hybrid p50 ≤ 20 ms at 100k).

Tokenizing the 30–50 candidates' text was most of the ``maxsim`` / ``learned`` stages' own
cost. For a BERT tokenizer a space, tab or newline ends a word and makes no piece, so a text's
ids are its chunks' ids one after the other (``rerank_maxsim._encode``): each chunk is
tokenized once and kept, and a text whose chunks were all seen is not tokenized again. The
ids are the ones the tokenizer gives the whole text: here on texts that mix every kind of
character the tokenizer treats specially, in ``tests/test_fuzz_rerank_chunks.py`` on any
text, and on a real 100k store (every memory's text; see the commit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.recall import rerank_maxsim, rerank_tokens
from workbench.recall.rerank_tokens import TokenTable

TEXTS = [
    "Fix RefundWorker in payments: charged twice (idempotency key)",
    "refund\tcharged\ntwice\r\nagain  and   again",
    "Café naïve ÉCOLE — straße ΟΔΟΣ σοφός",
    "中文字符 mixed with English 日本語テキスト",
    "[MASK] token [CLS]and[SEP] inside [UNK] words",
    "zero\u200bwidth\u00a0nbsp\u3000ideographic\u2028line\x0bvt\x85nel\x00nul\ufffd",
    "a" * 150 + " " + "b" * 99 + " done",
    "  leading and trailing blanks  ",
    "",
    "e\u0301 combining at the start: \u0301x",
    "path/to/file.py:42 snake_case_name kebab-case 3.14 1,000 $5 #tag @user",
]


def whole(table: TokenTable, texts: list[str]) -> list[list[int]]:
    """The ids the tokenizer gives each whole text (what the stage used before)."""
    encoded = table.tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    return [list(found.ids[: rerank_maxsim.MAX_PIECES]) for found in encoded]


class Counting:
    """The table's tokenizer, recording the texts it is asked to tokenize."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.asked: list[str] = []

    def encode_batch_fast(self, texts: list[str], **kwargs: Any) -> Any:
        self.asked.extend(texts)
        return self.inner.encode_batch_fast(texts, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_chunked_ids_are_the_whole_texts_ids(installed_static_model: Path) -> None:
    table = rerank_tokens.load_static(installed_static_model)
    assert rerank_maxsim._by_word(table)
    rerank_maxsim.clear_cache()
    assert rerank_maxsim._encode(table, TEXTS) == whole(table, TEXTS)
    assert rerank_maxsim._encode(table, TEXTS[::-1]) == whole(table, TEXTS[::-1])  # warm
    long = " ".join(TEXTS * 20)  # past MAX_PIECES: the first pieces, as the whole text's
    assert rerank_maxsim._encode(table, [long]) == whole(table, [long])


def test_a_text_of_seen_chunks_is_not_tokenized_again(installed_static_model: Path) -> None:
    loaded = rerank_tokens.load_static(installed_static_model)
    counting = Counting(loaded.tokenizer)
    table = TokenTable(loaded.vectors, counting, loaded.sha256, loaded.unit)
    rerank_maxsim.clear_cache()
    first = rerank_maxsim.content_pieces(table, ["refund charged twice", "webhook retry"])
    assert sorted(counting.asked) == ["charged", "refund", "retry", "twice", "webhook"]
    counting.asked.clear()
    texts = ["twice retry webhook refund", "refund"]
    again = rerank_maxsim.content_pieces(table, texts)
    assert counting.asked == []  # every chunk was seen: nothing tokenized
    meaning = rerank_maxsim._meaning(loaded)
    plain = [[i for i in ids if meaning[i]] or ids for ids in whole(loaded, texts)]
    assert again == plain
    assert first == [
        [i for i in ids if meaning[i]] or ids
        for ids in whole(loaded, ["refund charged twice", "webhook retry"])
    ]


def test_the_chunk_cache_is_bounded_in_entries_and_bytes(
    installed_static_model: Path, monkeypatch: Any
) -> None:
    """Past ``CHUNK_CACHE_SIZE`` chunks the older half leaves; full, it holds ~1.5 MB."""
    import gc
    import tracemalloc

    table = rerank_tokens.load_static(installed_static_model)
    rerank_maxsim.clear_cache()
    # Chunks as real text has them: words and identifiers of 3–16 characters, most unique.
    chunks = [f"w{k * 7919 % 1000003:x}{'_part' * (k % 3)}" for k in range(30_000)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for first in range(0, len(chunks), 40):
            rerank_maxsim._encode(table, [" ".join(chunks[first : first + 40])])
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    (kept,) = rerank_maxsim._CHUNKS.values()
    assert len(kept) <= rerank_maxsim.CHUNK_CACHE_SIZE
    assert chunks[-1] in kept  # the newest stay
    assert held < 1.5 * 1024 * 1024
    text = " ".join(chunks[:100])  # chunks gone from the cache are tokenized again, alike
    assert rerank_maxsim._encode(table, [text]) == whole(table, [text])
    rerank_maxsim.clear_cache()
