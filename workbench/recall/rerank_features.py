"""What the second stage knows about each fused candidate: a short vector of numbers in [0, 1].

Fusion sees two scores per hit. The reranker also sees the words: whether the query's
identifiers (``ReviewBuildWorker``, ``check_token``) appear whole in the memory, how much of
the query its title covers versus its body, the longest run of query words it holds in order
(an exact phrase), how recent it is among the candidates and its type. Each ranker's score is
kept too (normalised by that list's best, plus 1/rank), so a learned model can trust one
ranker more where the other is weak.

Cost: one ``SELECT`` of the candidates' text (≤ 50 rows) and plain-Python word sets; no model,
no FTS query. ``FEATURES`` names the columns; a stored model whose names differ is refused
(``rerank.load_model``), so adding a feature cannot silently misalign old weights.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from workbench.store.identifiers import split_identifiers

TYPES = ("decision", "bugfix", "feature", "refactor", "discovery", "change")
# What the two rankers said, the first columns here and in ``rerank_learned``'s model.
RANK_FEATURES: tuple[str, ...] = (
    "fused",  # fused score / the list's best
    "fused_rr",  # 1 / fused rank
    "fts",  # BM25 / the list's best (0: not a full-text hit)
    "fts_rr",
    "cosine",  # the vector ranker's cosine (0: unknown)
    "cosine_rel",  # cosine / the best cosine among the candidates
    "vector_rr",
    "both",  # found by both rankers
)
FEATURES: tuple[str, ...] = (
    *RANK_FEATURES,
    "phrase",  # longest run of query words held in order / query words (runs of 2+)
    "title_cover",  # share of the query's words in the title
    "body_cover",  # share in subtitle, narrative, facts, concepts
    "identifier",  # share of the query's identifiers held whole (0 when it has none)
    "recency",  # 1 newest candidate … 0 oldest
    *(f"type_{t}" for t in TYPES),
)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDENT = re.compile(r"[A-Za-z0-9]+(?:[_\-./][A-Za-z0-9]+)+|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*")
_STOP = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its me my of on"
    " or our so that the their them then there these this to was we were what when where which"
    " who why will with you your".split()
)
# The recipe of ``words`` (``_WORD``, ``stem``, ``split_identifiers``): rows of
# ``observation_tokens`` written under another are not read. Bump it with any change to what
# ``words`` gives (tests/test_token_rows.py pins the words of sample texts).
WORDS_VERSION = 1


@dataclass
class Candidates:
    """The fused list and what each ranker said, as ``SearchEngine`` had it after fusion."""

    fused: list[tuple[int, float]]  # best first
    text: Sequence[tuple[int, float]] = ()  # BM25 (id, score), best first
    vector: Sequence[tuple[int, float]] = ()  # (id, cosine), best first
    cosines: Mapping[int, float] = field(default_factory=dict)  # full-text hits' cosines


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A crude, symmetric stem (both sides get it): ``refunds``/``refunded`` → ``refund``."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """Lower-case stemmed words of ``text``, each CamelCase word followed by its parts."""
    return list(_words(text))


def words_of(text: str) -> tuple[str, ...]:
    """``words``, uncached (the indexer's ``token_rows`` runs it over every memory once)."""
    expanded = split_identifiers(text)
    return tuple(map(stem, _WORD.findall(str(expanded).lower())))


def digest(title: str, body: str) -> bytes:
    """What ``observation_tokens`` rows are checked against: the title and body they were
    made from (apart, so moving a word between them is another text)."""
    text = f"{title}\x00{body}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=16).digest()


def text_words(found: ObsText) -> tuple[Sequence[str], Sequence[str]]:
    """``words`` of a candidate's title and of its body: its ``observation_tokens`` row's
    when ``load_texts`` found one made from this text by this recipe, else tokenized here."""
    kept = found.get("words")
    if kept is not None:
        return kept
    return _words(found["title"]), _words(found["body"])


def clear_cache() -> None:
    """Forget the cached words (benches time a cold stage; a forget, ``text_caches``)."""
    _words.cache_clear()
    _identifiers.cache_clear()
    stem.cache_clear()


@functools.lru_cache(maxsize=512)
def _words(text: str) -> tuple[str, ...]:
    """``words``, cached: a search's stages read the same candidates' title and body twice."""
    return words_of(text)


def query_words(query: str) -> list[str]:
    """The query's content words, in order, once each."""
    return list(dict.fromkeys(w for w in words(query) if w not in _STOP))


def identifiers(text: str) -> set[str]:
    """Code-like tokens (``check_token``, ``payments-api``, ``ReviewBuildWorker``), lower-cased."""
    return set(_identifiers(text))


@functools.lru_cache(maxsize=512)
def _identifiers(text: str) -> frozenset[str]:
    """``identifiers``, cached: a memory's text never changes, and the regex over 30 long
    candidates was a third of the learned stage's warm cost (bench/relevance_ltr.py)."""
    return frozenset(m.group(0).lower() for m in _IDENT.finditer(text))


def longest_run(query: Sequence[str], text: Sequence[str]) -> int:
    """The longest run of consecutive query words found consecutively in ``text``.

    Only the places of ``text`` that hold a query word can start or continue a run, so the
    walk starts from those alone (found in one pass); a run of two needs two of them.
    """
    if not query or not text:
        return 0
    starts: dict[str, list[int]] = {}  # a query word -> where it stands in ``query``
    for n, w in enumerate(query):
        starts.setdefault(w, []).append(n)
    held = [n for n, w in enumerate(text) if w in starts]
    if len(held) < 2:
        return len(held)
    best = 1
    for pos in held:
        for start in starts[text[pos]]:
            length = 1
            while (
                start + length < len(query)
                and pos + length < len(text)
                and text[pos + length] == query[start + length]
            ):
                length += 1
            best = max(best, length)
    return best


class ObsText(TypedDict):
    """What the text features read of one observation."""

    type: str
    title: str
    body: str
    epoch: int
    # Its ``observation_tokens`` row, when one was made from this title and body: the words
    # of each (``words``, under ``WORDS_VERSION``), and MaxSim's pieces with their recipe
    # (``rerank_maxsim.known_pieces`` checks the recipe).
    words: NotRequired[tuple[Sequence[str], Sequence[str]]]
    pieces: NotRequired[tuple[str, bytes]]


def load_texts(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, ObsText]:
    """Title, body text, type and time of each observation in ``ids`` (one query), with its
    ``observation_tokens`` row where one was made from that text (``ObsText``)."""
    if not ids:
        return {}
    sql = (
        "SELECT o.id, o.type, o.title, o.subtitle, o.narrative, o.facts, o.concepts,"
        " o.created_at_epoch, t.digest, t.words_version, t.title_words, t.body_words,"
        " t.pieces_recipe, t.pieces FROM observations o"
        " LEFT JOIN observation_tokens t ON t.observation_id = o.id"
        f" WHERE o.id IN ({', '.join('?' * len(ids))})"
    )
    out: dict[int, ObsText] = {}
    for row in conn.execute(sql, list(ids)):
        body = " ".join(str(v or "") for v in (row[3], row[4], flat(row[5]), flat(row[6])))
        found: ObsText = {
            "type": str(row[1] or ""),
            "title": str(row[2] or ""),
            "body": body,
            "epoch": int(row[7] or 0),
        }
        if row[8] is not None and row[8] == digest(found["title"], body):
            if row[9] == WORDS_VERSION:
                found["words"] = (_split(row[10]), _split(row[11]))
            if row[12] is not None and isinstance(row[13], bytes):
                found["pieces"] = (str(row[12]), row[13])
        out[int(row[0])] = found
    return out


def _split(joined: object) -> tuple[str, ...]:
    """Words kept joined by spaces (``token_rows``), back as ``words`` gave them: a word holds
    letters and digits only, never a space, and is never empty."""
    text = str(joined or "")
    return tuple(text.split(" ")) if text else ()


def flat(value: object) -> str:
    """A JSON list column as plain text (its raw text when it is not JSON)."""
    text = str(value or "")
    try:
        parsed = json.loads(text) if text.startswith("[") else text
    except ValueError:
        return text
    return " ".join(str(v) for v in parsed) if isinstance(parsed, list) else text


def compute(
    conn: sqlite3.Connection,
    query: str,
    candidates: Candidates,
    texts: Mapping[int, ObsText] | None = None,
) -> tuple[list[int], list[list[float]]]:
    """``(ids, rows)``: one feature row per fused candidate, in ``FEATURES`` order.

    Candidates missing from the store (deleted since they were indexed) keep a row of their
    rank features only, so the caller never loses an id. ``texts``: the candidates'
    ``load_texts``, when the caller has read them already.
    """
    ids = [i for i, _ in candidates.fused]
    if texts is None:
        texts = load_texts(conn, ids)
    q_words = query_words(query)
    q_idents = identifiers(query)
    epochs = [t["epoch"] for t in texts.values()]
    low, high = (min(epochs), max(epochs)) if epochs else (0, 0)
    rows = rank_rows(candidates)
    for item, row in zip(ids, rows, strict=True):
        row += _text_features(texts.get(item), q_words, q_idents, low, high)
    return ids, rows


def rank_rows(candidates: Candidates) -> list[list[float]]:
    """Per fused candidate, its ``RANK_FEATURES`` (what the two rankers said): no text read."""
    ids = [i for i, _ in candidates.fused]
    top_fused = max((s for _, s in candidates.fused), default=0.0)
    fts_scores = dict(candidates.text)
    fts_rank = {i: n for n, (i, _) in enumerate(candidates.text, start=1)}
    top_fts = max(fts_scores.values(), default=0.0)
    vec_rank = {i: n for n, (i, _) in enumerate(candidates.vector, start=1)}
    cosine = {int(i): float(c) for i, c in candidates.cosines.items()}
    cosine.update(dict(candidates.vector))
    top_cos = max((max(cosine.get(i, 0.0), 0.0) for i in ids), default=0.0)
    rows: list[list[float]] = []
    for n, (item, score) in enumerate(candidates.fused, start=1):
        cos = max(cosine.get(item, 0.0), 0.0)
        rows.append(
            [
                score / top_fused if top_fused > 0 else 0.0,
                1.0 / n,
                fts_scores.get(item, 0.0) / top_fts if top_fts > 0 else 0.0,
                1.0 / fts_rank[item] if item in fts_rank else 0.0,
                cos,
                cos / top_cos if top_cos > 0 else 0.0,
                1.0 / vec_rank[item] if item in vec_rank else 0.0,
                1.0 if item in fts_rank and item in vec_rank else 0.0,
            ]
        )
    return rows


def _text_features(
    found: ObsText | None,
    q_words: list[str],
    q_idents: set[str],
    low: int,
    high: int,
) -> list[float]:
    if found is None:
        return [0.0] * (len(FEATURES) - 8)
    title, body = str(found["title"]), str(found["body"])
    t_words, b_words = text_words(found)
    t_set, b_set = set(t_words), set(b_words)
    share = len(q_words) or 1
    run = max(longest_run(q_words, t_words), longest_run(q_words, b_words))
    held = _identifiers(title + " " + body) if q_idents else frozenset()
    epoch = int(str(found["epoch"]))
    return [
        run / share if run >= 2 else 0.0,
        sum(w in t_set for w in q_words) / share,
        sum(w in b_set for w in q_words) / share,
        len(q_idents & held) / len(q_idents) if q_idents else 0.0,
        (epoch - low) / (high - low) if high > low else 1.0,
        *(1.0 if found["type"] == t else 0.0 for t in TYPES),
    ]
