"""The ``maxsim`` second stage: late interaction over MiniLM's word-piece vectors.

Fusion sees one vector per memory, so a turn that holds the query's rare word among many
others ranks below a vaguer turn on the same topic. MaxSim (ColBERT) looks at the words:
each query word piece takes its best cosine against the candidate's pieces, weighted by how
rare the piece is among the candidates (an IDF over the 30–50 candidates, so "the" and the
topic every candidate shares count little), averaged. The candidate's score is

    fused_weight · fused / best fused + (1 − fused_weight) · MaxSim, min-max scaled over the list

so the fused evidence stays the larger part (``search_rerank_maxsim_fused``, chosen by
cross-validation across the relevance sets: bench/relevance.py ``maxsim_cv``).

The vectors come from ``rerank_tokens`` (a table built from the shipped MiniLM, no model
run at search time): one lookup and one matrix product per search, a few ms for 50 memories.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sqlite3
import sys
import threading
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.recall import rerank_features
from workbench.recall.rerank_features import Candidates, ObsText
from workbench.recall.rerank_tokens import TokenTable

DEFAULT_FUSED_WEIGHT = 0.7
MAX_PIECES = 256  # per candidate: a long memory's first 256 word pieces
# The recipe of ``content_pieces`` (with the tokenizer's content, ``pieces_recipe``): rows of
# ``observation_tokens`` written under another are not read. Bump it with any change to what
# ``content_pieces`` gives (tests/test_token_rows.py pins the pieces of sample texts).
PIECES_VERSION = 1
_RECIPES: dict[str, str] = {}  # table -> its ``pieces_recipe``
CACHE_SIZE = 4096  # texts whose pieces are kept (~200 bytes each: ~1 MB at most)
# By table and a digest of the text: the pieces as 2- or 4-byte integers. Keeping the text
# and a tuple of Python ints instead cost ~2.5 KB a text, ~10 MiB of RSS (issue 21).
_CACHE: dict[tuple[str, bytes], array] = {}
_LOCK = threading.Lock()
_MEANING: dict[str, tuple[bool, ...]] = {}  # table -> whether each word piece carries meaning
# By table and id width: each chunk of text (between blanks) -> its word-piece ids, packed
# (``_encode``). Bounded:
# 8192 chunks of ~10 characters and their few ids, ~1.5 MB at most
# (tests/test_rerank_maxsim_chunks.py measures it).
CHUNK_CACHE_SIZE = 8192
_CHUNKS: dict[tuple[str, str], dict[str, bytes]] = {}
_BY_WORD: dict[str, bool] = {}  # table -> its tokenizer may run chunk by chunk (``_by_word``)
_BLANKS = re.compile(r"[ \t\n\r]+")  # what ends a word for BERT and makes no piece
_STOP = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its me my of on"
    " or our so that the their them then there these this to was we were what when where which"
    " who why will with you your".split()
)


def _key(table: TokenTable, text: str) -> tuple[str, bytes]:
    return table.sha256, hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=16
    ).digest()


def content_pieces(
    table: TokenTable, texts: list[str], known: Mapping[str, list[int]] | None = None
) -> list[list[int]]:
    """Per text, the word pieces that carry meaning: no stop words, no punctuation.

    A memory's pieces never change, and tokenizing 30–50 candidates is most of this stage's
    cost (~1 µs per character on a busy 2-core box). ``known``: texts whose pieces were read
    (``known_pieces``: the indexer's ``observation_tokens`` rows). The others' are kept
    (``_CACHE``, by table and text, the last ``CACHE_SIZE`` texts): a later search over the
    same memories only tokenizes the query and the texts it has not seen.
    """
    have: dict[str, list[int]] = {t: list(known[t]) for t in texts if known and t in known}
    keys = {text: _key(table, text) for text in dict.fromkeys(texts) if text not in have}
    with _LOCK:  # searches run on several threads; the tokenizing itself runs outside
        for text, key in keys.items():
            found = _CACHE.pop(key, None)
            if found is not None:
                _CACHE[key] = found  # most recently used last
                have[text] = found.tolist()
    missing = [t for t in keys if t not in have]
    fresh: dict[str, array] = {}
    if missing:
        wide = _id_code(table)
        for text, kept in zip(missing, fresh_pieces(table, missing), strict=True):
            have[text] = kept
            fresh[text] = array(wide, kept)
    with _LOCK:
        for text, pieces in fresh.items():
            _CACHE[keys[text]] = pieces
        while len(_CACHE) > CACHE_SIZE:  # the least recently used leave first
            _CACHE.pop(next(iter(_CACHE)))
    return [list(have[text]) for text in texts]


def fresh_pieces(table: TokenTable, texts: list[str], *, keep: bool = True) -> list[list[int]]:
    """``content_pieces`` of ``texts``, tokenized now. ``keep=False``: chunks not seen before
    are not kept (the indexer tokenizing every memory would push out the searches' own)."""
    meaning = _meaning(table)
    return [[i for i in ids if meaning[i]] or ids for ids in _encode(table, texts, keep=keep)]


def pieces_recipe(table: TokenTable) -> str:
    """What a text's kept pieces (``observation_tokens.pieces``) depend on besides the text:
    this code's rules (``PIECES_VERSION``, ``MAX_PIECES``), the tokenizer's content and how
    the ids are packed. A row of another recipe is not read."""
    found = _RECIPES.get(table.sha256)
    if found is None:
        spec = hashlib.sha256(table.tokenizer.to_str().encode("utf-8")).hexdigest()[:16]
        found = f"{PIECES_VERSION}:{MAX_PIECES}:{spec}:{_id_code(table)}:{sys.byteorder}"
        _RECIPES[table.sha256] = found
    return found


def packed(table: TokenTable, pieces: Sequence[int]) -> bytes:
    """``pieces`` as ``observation_tokens.pieces`` holds them (``pieces_recipe``)."""
    return array(_id_code(table), pieces).tobytes()


def candidate_text(found: ObsText | None) -> str:
    """A candidate's text for MaxSim: its title and body ("" for one deleted)."""
    return f"{found['title']} {found['body']}".strip() if found is not None else ""


def known_pieces(table: TokenTable, loaded: Mapping[int, ObsText]) -> dict[str, list[int]]:
    """Candidate text -> its pieces, for each ``observation_tokens`` row ``load_texts`` found
    made from that text by this table's recipe (``pieces_recipe``)."""
    recipe = pieces_recipe(table)
    code = _id_code(table)
    width = array(code).itemsize
    known: dict[str, list[int]] = {}
    for found in loaded.values():
        kept = found.get("pieces")
        if kept is not None and kept[0] == recipe and len(kept[1]) % width == 0:
            known[candidate_text(found)] = array(code, kept[1]).tolist()
    return known


def _encode(table: TokenTable, texts: list[str], *, keep: bool = True) -> list[list[int]]:
    """Each text's first ``MAX_PIECES`` word-piece ids, as the table's tokenizer gives them.

    Why: tokenizing the candidates' text was most of the stage (~3 ms a hybrid search at 100k
    on a 2-core box), and a memory's words are mostly words other memories hold. For a BERT
    tokenizer (``_by_word``) a space, tab or newline ends a word and makes no piece of its own,
    and everything else it does (cleaning, accents, lower case, CJK, punctuation, word
    pieces, its special tokens) happens within a word: so a text's ids are its chunks' ids
    (split at those four characters) one after the other, and each chunk is tokenized once
    and kept (``_CHUNKS``, its ids packed as bytes; ``keep=False``: chunks new to the process
    are used, not kept). Any other tokenizer takes the whole texts, as before.
    """
    tokenizer = table.tokenizer
    if not _by_word(table):
        # ``encode_batch_fast``: the same ids without the character offsets (~10% cheaper).
        encoded = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
        return [found.ids[:MAX_PIECES] for found in encoded]
    code = _id_code(table)
    known = _CHUNKS.setdefault((table.sha256, code), {})
    split = [_chunks(text) for text in texts]
    unique: set[str] = set().union(*split)
    # Read once: another thread may drop entries from ``known`` meanwhile.
    have = {c: found for c in unique if (found := known.get(c)) is not None}
    have[""] = b""
    new = [c for c in unique if c not in have]
    if new:
        encoded = tokenizer.encode_batch_fast(new, add_special_tokens=False)
        fresh = {c: array(code, e.ids).tobytes() for c, e in zip(new, encoded, strict=True)}
        have.update(fresh)
        if keep:
            if len(known) + len(fresh) > CHUNK_CACHE_SIZE:
                # The older half leaves (insertion order); a refill costs one tokenizing a chunk.
                for old in list(itertools.islice(known, len(known) // 2 + len(fresh))):
                    known.pop(old, None)
            known.update(fresh)
    width = array(code).itemsize * MAX_PIECES
    return [
        array(code, b"".join(map(have.__getitem__, chunks))[:width]).tolist() for chunks in split
    ]


def _chunks(text: str) -> list[str]:
    """``text`` split at each space, tab, newline and carriage return; ``""`` between two of
    them and at a blank start or end (the chunk of no piece). Three ``replace`` and a
    ``split`` cost a fifth of the regular expression's split (~0.3 ms a search)."""
    return text.replace("\t", " ").replace("\n", " ").replace("\r", " ").split(" ")


def _id_code(table: TokenTable) -> str:
    """The ``array`` type code that holds any of the table's word-piece ids."""
    return "H" if len(_meaning(table)) <= 1 << 16 else "I"


def _by_word(table: TokenTable) -> bool:
    """Whether the table's tokenizer is BERT's (``_encode`` may tokenize it chunk by chunk):
    BERT's normalizer and pre-tokenizer, word pieces, and special tokens that hold no blank
    and take no blank beside them. Decided once per table."""
    found = _BY_WORD.get(table.sha256)
    if found is None:
        try:
            spec = json.loads(table.tokenizer.to_str())
            found = (
                (spec.get("normalizer") or {}).get("type") == "BertNormalizer"
                and (spec.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
                and (spec.get("model") or {}).get("type") == "WordPiece"
                and all(
                    not (a.get("lstrip") or a.get("rstrip") or a.get("single_word"))
                    and not _BLANKS.search(str(a.get("content", " ")))
                    for a in spec.get("added_tokens") or []
                )
            )
        except (ValueError, TypeError, AttributeError):
            found = False
        _BY_WORD[table.sha256] = found
    return found


def _meaning(table: TokenTable) -> tuple[bool, ...]:
    """Per word-piece id: whether the piece carries meaning (no stop word, some letter or
    digit). A piece's string is fixed by its id, so this is decided once per table
    (``_MEANING``) instead of per piece of every candidate (a third of the stage's cost)."""
    found = _MEANING.get(table.sha256)
    if found is None:
        vocab = table.tokenizer.get_vocab(with_added_tokens=True)
        meaning = [False] * (max(vocab.values(), default=-1) + 1)
        for piece, i in vocab.items():
            meaning[i] = piece not in _STOP and any(c.isalnum() for c in piece)
        found = _MEANING[table.sha256] = tuple(meaning)
    return found


def clear_cache() -> None:
    """Forget every text's pieces (benches time a cold stage; a forget, ``text_caches``)."""
    with _LOCK:
        _CACHE.clear()
        _CHUNKS.clear()


def scores(
    table: TokenTable,
    query: str,
    texts: Sequence[str],
    known: Mapping[str, list[int]] | None = None,
) -> list[float]:
    """MaxSim of ``query`` against each text, IDF-weighted over ``texts`` (0 for an empty one).
    ``known``: texts whose pieces were read (``known_pieces``)."""
    import numpy as np

    query_ids, *docs = content_pieces(table, [query, *texts], known)
    if not query_ids or not any(docs):
        return [0.0] * len(texts)
    # Candidates holding each query piece (only the query's pieces are ever looked up).
    held = [set(doc) for doc in docs]
    present = np.asarray([sum(t in h for h in held) for t in query_ids], dtype=np.float32)
    weights = np.log((len(docs) + 1) / (1 + present)) + 1.0
    lengths = np.asarray([len(d) for d in docs])
    # Each distinct piece once: 30 candidates share most of their pieces, so the product
    # runs over the few hundred distinct ones and is spread back (same values, a fraction
    # of the cost on long turns).
    every = itertools.chain.from_iterable(docs)
    pieces = np.fromiter(every, dtype=np.int64, count=int(lengths.sum()))
    distinct, spread = np.unique(pieces, return_inverse=True)
    # The query's rows and the candidates' in one read of the table (a read the static
    # model's row cache misses faults the file's pages in and lets them go:
    # ``rerank_tokens.RowFile``); each part is then its own array, as two reads gave.
    both = _rows(table, np.concatenate((np.asarray(query_ids, dtype=distinct.dtype), distinct)))
    q, d = both[: len(query_ids)].copy(), both[len(query_ids) :].copy()
    # Query pieces × every distinct piece. By numpy's own loop, not BLAS: OpenBLAS runs even
    # this small a product on all its threads, and on a busy 2-core machine that cost 8–30 ms
    # against ~1 ms single-threaded (measured in bench/).
    sims = np.einsum("qk,dk->qd", q, d, optimize=False)[:, spread.reshape(-1)]
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    filled = lengths > 0
    best = np.zeros((len(query_ids), len(docs)), dtype=np.float32)
    best[:, filled] = np.maximum.reduceat(sims, starts[filled], axis=1)
    out = (weights @ best) / float(weights.sum())
    return [float(v) if n else 0.0 for v, n in zip(out, filled, strict=True)]


def _rows(table: TokenTable, ids: Any) -> Any:
    """The table's rows of ``ids`` as float32, unit length (a table of other rows scaled)."""
    import numpy as np

    rows = np.asarray(table.vectors[ids], dtype=np.float32)
    if not table.unit:
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)
    return rows


def loaded_scores(
    table: TokenTable, query: str, ids: Sequence[int], loaded: Mapping[int, ObsText]
) -> list[float]:
    """``scores`` of the candidates ``ids`` from their ``load_texts`` (their text, and the
    pieces their ``observation_tokens`` rows hold: ``known_pieces``)."""
    texts = [candidate_text(loaded.get(i)) for i in ids]
    return scores(table, query, texts, known_pieces(table, loaded))


def candidate_texts(conn: sqlite3.Connection, ids: Sequence[int]) -> list[str]:
    """Each candidate's title and body ("" for one deleted since it was indexed)."""
    found = rerank_features.load_texts(conn, ids)
    return [candidate_text(found.get(i)) for i in ids]


def combine(
    head: Sequence[tuple[int, float]], maxsim: Sequence[float], fused_weight: float
) -> list[tuple[int, float]]:
    """``head`` (fused, best first) by ``fused_weight`` · fused / best + the rest · MaxSim."""
    low, high = min(maxsim), max(maxsim)
    top = max(s for _, s in head)
    combined = [
        fused_weight * (s / top if top > 0 else 0.0)
        + (1.0 - fused_weight) * ((m - low) / (high - low) if high > low else 0.0)
        for (_, s), m in zip(head, maxsim, strict=True)
    ]
    return [head[n] for n in sorted(range(len(head)), key=lambda n: (-combined[n], n))]


def order(
    conn: sqlite3.Connection,
    query: str,
    candidates: Candidates,
    table: TokenTable,
    top_n: int,
    fused_weight: float = DEFAULT_FUSED_WEIGHT,
) -> list[tuple[int, float]]:
    """The fused list with its first ``top_n`` reordered (ties: fused order). Raises on failure."""
    head, tail = candidates.fused[:top_n], candidates.fused[top_n:]
    if len(head) < 2:
        return list(candidates.fused)
    ids = [i for i, _ in head]
    maxsim = loaded_scores(table, query, ids, rerank_features.load_texts(conn, ids))
    reordered = combine(head, maxsim, fused_weight)
    if sorted(i for i, _ in reordered) != sorted(i for i, _ in head):
        raise RuntimeError("the reranker changed the candidate set")
    return reordered + list(tail)
