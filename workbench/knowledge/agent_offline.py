"""The offline knowledge agent: answers by retrieval and quotation, with no language model.

So the whole corpus → prime → ask flow works on a fresh machine with no API key. It is honest
about what it is: every answer starts by saying it is extractive (quotes, not a synthesis),
the response is tagged ``agent: "offline-extractive"``, and usage is all zeros.

How it answers:
1. **Retrieve, restricted to the corpus.** Two rankings are fused by reciprocal rank (the
   recall fusion, ``rrf``): the store's hybrid search (BM25 + vectors when the service has an
   embedding model) run with the corpus's own filter and kept to the corpus's ids, and a
   BM25 over the corpus's frozen text, which needs nothing but the corpus file (it still
   works when the store has changed since the corpus was built). Only corpus ids can come out.
2. **Quote.** For the best few observations, the sentences and facts sharing the most terms
   with the question are quoted under the observation's ``[#id]``, which is cited.
3. **Follow-ups.** A short question (fewer than three content words, e.g. "and why?") is
   read together with the latest earlier question that named its subject.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.knowledge.agent_claude import Reply, zero_usage
from workbench.recall.fts import STOPWORDS, WORD
from workbench.recall.search import rrf

if TYPE_CHECKING:
    from workbench.knowledge.conversations import Turn
    from workbench.knowledge.corpus import Corpus, CorpusObservation

log = logging.getLogger("workbench.knowledge")

NAME = "offline-extractive"
TOP_K = 5
QUOTES_PER_HIT = 2
QUOTE_CHARS = 320
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")

# (question, corpus) -> corpus observation ids, best first (the store's hybrid search)
CorpusSearch = Callable[[str, "Corpus"], list[int]]


def terms(text: str) -> list[str]:
    """Lowercased, crudely stemmed content words (stopwords dropped)."""
    return [_stem(w.lower()) for w in WORD.findall(text or "") if w.lower() not in STOPWORDS]


class OfflineAgent:
    """Extractive answers from one corpus (see the module docstring)."""

    name = NAME

    def __init__(self, search: CorpusSearch | None = None, *, top_k: int = TOP_K) -> None:
        self.search = search
        self.top_k = top_k

    def close(self) -> None:
        """Nothing to release (the same interface as the Claude agent)."""

    def prime(self, corpus: Corpus) -> dict[str, int]:
        """Nothing to load: the corpus file is read on each question. Usage is zero."""
        return zero_usage()

    def ask(self, corpus: Corpus, turns: list[Turn], question: str) -> Reply:
        query = question
        follow_up = ""
        if turns and len(set(terms(question))) < 3:
            # The latest earlier question that says what it is about ("and why?" after "and
            # how?" after "how does the retry backoff work?" still means the backoff).
            follow_up = next(
                (t.question for t in reversed(turns) if len(set(terms(t.question))) >= 3),
                turns[-1].question,
            )
            query = f"{question} {follow_up}"
        ranked = self.rank(corpus, query)[: self.top_k]
        by_id = {o.id: o for o in corpus.observations}
        hits = [by_id[i] for i in ranked if i in by_id]
        answer = _compose(corpus, follow_up, hits, terms(query))
        return Reply(answer, [o.id for o in hits], zero_usage())

    def rank(self, corpus: Corpus, query: str) -> list[int]:
        """Corpus ids, best first: store hybrid search fused with the corpus's own BM25."""
        allowed = corpus.ids()
        local = _index_for(corpus).rank(terms(query))
        lists = [("corpus", local)]
        if self.search is not None:
            try:
                found = [i for i in self.search(query, corpus) if i in allowed]
            except Exception as exc:  # the store's search is a bonus; the corpus can answer
                log.warning("store search failed for corpus %s: %s", corpus.name, exc)
                found = []
            lists.append(("search", found))
        return [i for i, _ in rrf(lists) if i in allowed]


class _Index:
    """BM25 over a corpus's frozen text (title and concepts weighted up), as postings.

    Postings (term → {id: count}) so a question only touches the observations that share a
    term with it, not the whole corpus.
    """

    K1, B = 1.2, 0.75

    def __init__(self, corpus: Corpus) -> None:
        self.postings: dict[str, dict[int, int]] = {}
        self.lengths: dict[int, int] = {}
        for obs in corpus.observations:
            words = terms(" ".join([obs.title] * 3 + obs.concepts * 2))
            words += terms(" ".join([obs.subtitle, obs.narrative, *obs.facts]))
            words += terms(" ".join(obs.files_read + obs.files_modified))
            self.lengths[obs.id] = len(words)
            for term, count in Counter(words).items():
                self.postings.setdefault(term, {})[obs.id] = count
        self.average = (sum(self.lengths.values()) / len(self.lengths)) if self.lengths else 1.0

    def rank(self, query: list[str]) -> list[int]:
        n = len(self.lengths)
        scores: dict[int, float] = {}
        for term in set(query):
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc_id, tf in posting.items():
                norm = self.K1 * (1 - self.B + self.B * self.lengths[doc_id] / self.average)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (self.K1 + 1) / (tf + norm)
        return sorted(scores, key=lambda i: (-scores[i], -i))


_cache: dict[tuple[str, str, int], _Index] = {}
_cache_lock = threading.Lock()


def _index_for(corpus: Corpus) -> _Index:
    """The corpus's index, kept while the corpus is unchanged (a few corpora at most)."""
    key = (corpus.name, corpus.updated_at, len(corpus.observations))
    with _cache_lock:
        found = _cache.get(key)
    if found is None:
        found = _Index(corpus)
        with _cache_lock:
            if len(_cache) >= 8:
                _cache.pop(next(iter(_cache)))
            _cache[key] = found
    return found


def _compose(
    corpus: Corpus,
    follow_up: str,
    hits: list[CorpusObservation],
    query_terms: list[str],
) -> str:
    intro = (
        "Offline extractive answer: no language model was used (no Anthropic API key is set), "
        "so this is not a synthesis. "
    )
    context = f' (read as a follow-up to "{follow_up}")' if follow_up else ""
    if not corpus.observations:
        return intro + f'Corpus "{corpus.name}" is empty, so there is nothing to quote.'
    if not hits:
        covered = ", ".join(f"{k} {v}" for k, v in corpus.stats.type_breakdown.items())
        return (
            intro + f'No observation in corpus "{corpus.name}" matches the question{context}. '
            f"The corpus holds {corpus.stats.observation_count} observations ({covered}) from "
            f"{corpus.stats.date_range.earliest} to {corpus.stats.date_range.latest}; try its "
            "own terms (files, functions, errors)."
        )
    lines = [
        intro + f'These are the {len(hits)} observations of corpus "{corpus.name}" that best '
        f"match the question{context}, quoted. Set WORKBENCH_ANTHROPIC_API_KEY for synthesized "
        "answers.",
        "",
    ]
    wanted = set(query_terms)
    for number, obs in enumerate(hits, start=1):
        day = obs.created_at[:10]
        lines.append(f"{number}. [#{obs.id}] {obs.type}, {day}: {' '.join(obs.title.split())}")
        for quote in _best_quotes(obs, wanted):
            lines.append(f"   > {quote}")
    return "\n".join(lines)


def _best_quotes(obs: CorpusObservation, wanted: set[str]) -> list[str]:
    """The sentences/facts of ``obs`` sharing the most terms with the question."""
    candidates = [obs.subtitle, *_SENTENCE.split(obs.narrative), *obs.facts]
    cleaned = [" ".join(c.split()) for c in candidates if c and c.strip()]
    scored = [(len(wanted & set(terms(c))), -n, c) for n, c in enumerate(cleaned)]
    best = [c for score, _, c in sorted(scored, reverse=True) if score > 0][:QUOTES_PER_HIT]
    if not best and cleaned:
        best = cleaned[:1]
    return [c if len(c) <= QUOTE_CHARS else c[: QUOTE_CHARS - 1].rstrip() + "…" for c in best]


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word
