"""Evaluate recall on a person's own history: questions with known answers, swept settings.

No memory tool can tell its user whether its retrieval works *on their history*. This module
can, because the history already holds questions and their answers:

- **Questions.** Every session summary is one prompt of a real session. Its ``request`` (what
  the user asked) or its ``learned`` text (what the session found out) becomes the question,
  and the observations of that same prompt, what the agent did to answer it, are the gold
  evidence. Prompts that produced no observation are skipped: there is nothing to find.
  (``learned`` quotes some observation facts by construction, so it is the easier source:
  an upper bound, where ``request`` is the realistic one.)
- **Retrieval once, settings many.** Each question is ranked once per mode (``fts``,
  ``vector``, ``hybrid``) at the deepest ``top_k``; every smaller ``top_k`` and every token
  budget is a prefix of that ranking. Prefixes are exact for ``top_k`` ≤ 25: the engine's
  fusion depth stays at 50 up to there (``workbench.recall.search.FUSION_DEPTH``).
- **A token budget** keeps hits in rank order while their token estimates fit, and stops at
  the first that does not, the way a context block is cut.

Metrics per setting (mode, top_k, budget), averaged over the questions:

- ``recall``: the share of a question's gold observations among the injected hits;
- ``hit_rate``: the share of questions with at least one gold observation injected;
- ``mrr``: mean reciprocal rank of the first gold hit among the injected ones (0 when none);
- ``tokens``: mean tokens injected (the hits' token estimates, ``ceil(chars / 4)``).

Retrievers: ``LocalRetriever`` runs the library's ``SearchEngine`` on a (read-only)
connection, optionally with an ``InProcessRanker`` that loads the local MiniLM model in this
process; ``ServiceRetriever`` asks a running service (which holds the model) over HTTP. A mode
that cannot run is reported with the reason and left out, never silently replaced.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from workbench.errors import InvalidInput

if TYPE_CHECKING:
    import polars as pl

MODES = ("fts", "vector", "hybrid")
SOURCES = ("request", "learned")
TOP_KS = (1, 3, 5, 10, 20)
BUDGETS: tuple[int | None, ...] = (None, 250, 500, 1000)
MAX_EXACT_K = 25


@dataclass(frozen=True)
class Question:
    """One prompt of the history as a question, with the observations that answered it."""

    id: int  # the summary's id
    source: str  # request | learned
    text: str
    project: str
    content_session_id: str
    prompt_number: int
    gold: frozenset[int]


@dataclass(frozen=True)
class Hit:
    id: int
    tokens: int


class Retriever(Protocol):
    """Ranks observations for a query in one mode."""

    def unavailable(self, mode: str) -> str | None:
        """None when ``mode`` can run, else why not."""
        ...

    def rank(self, query: str, mode: str, k: int, project: str | None) -> list[Hit]: ...


# ----- questions ---------------------------------------------------------------------------------
def questions(
    conn: sqlite3.Connection,
    *,
    sources: Sequence[str] = ("request",),
    project: str | None = None,
    min_words: int = 4,
    limit: int | None = None,
    seed: int = 0,
) -> list[Question]:
    """Questions from the summaries (oldest first; ``limit`` draws a seeded sample)."""
    unknown = [s for s in sources if s not in SOURCES]
    if unknown:
        raise InvalidInput(f"unknown question source {unknown}; use {' or '.join(SOURCES)}")
    from workbench.recall.filters import SearchFilters

    clauses, params = SearchFilters(project=project).table_sql("session_summaries", "s")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = conn.execute(
        "SELECT s.id, s.project, s.content_session_id, s.prompt_number, s.request, s.learned,"
        " group_concat(o.id) AS gold FROM session_summaries s"
        " JOIN observations o ON o.content_session_id = s.content_session_id"
        f" AND o.prompt_number = s.prompt_number {where}"
        " GROUP BY s.id ORDER BY s.created_at_epoch, s.id",
        params,
    ).fetchall()
    found: list[Question] = []
    for row in rows:
        gold = frozenset(int(i) for i in str(row[6]).split(","))
        for source in sources:
            text = " ".join(str(row[4] if source == "request" else row[5] or "").split())
            if len(text.split()) < min_words:
                continue
            found.append(Question(row[0], source, text, row[1], row[2], row[3], gold))
    if limit is not None and len(found) > limit:
        keep = sorted(random.Random(seed).sample(range(len(found)), limit))
        found = [found[i] for i in keep]
    return found


# ----- retrievers --------------------------------------------------------------------------------
class LocalRetriever:
    """The library's search engine on a connection (read-only is enough)."""

    def __init__(self, conn: sqlite3.Connection, ranker: Any = None) -> None:
        from workbench.recall.search import SearchEngine

        self.engine = SearchEngine(conn, None, ranker)

    def unavailable(self, mode: str) -> str | None:
        if mode == "fts":
            return None
        # hybrid without vectors would quietly be full text: report it instead
        return self.engine.vector_unavailable()

    def rank(self, query: str, mode: str, k: int, project: str | None) -> list[Hit]:
        from workbench.recall.filters import SearchFilters

        result = self.engine.search(
            query, SearchFilters(project=project), types="observations", mode=mode, limit=k
        )
        return [Hit(h.id, h.tokens) for h in result.observations]


class ServiceRetriever:
    """A running service's ``/api/search`` (it holds the embedding model)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        embeddings = client.get("/api/health").get("embeddings", {})
        self._vectors = (
            None
            if embeddings.get("state") == "ready"
            else (
                f"the service's embeddings are {embeddings.get('state', 'unknown')}: "
                f"{embeddings.get('reason', 'no reason given')}"
            )
        )

    def unavailable(self, mode: str) -> str | None:
        return None if mode == "fts" else self._vectors

    def rank(self, query: str, mode: str, k: int, project: str | None) -> list[Hit]:
        body = self.client.get(
            "/api/search",
            query=query,
            project=project,
            kinds="observations",
            mode=mode,
            limit=k,
            format="json",
        )
        return [Hit(int(h["id"]), int(h["tokens"])) for h in body["observations"]]


class InProcessRanker:
    """A ``VectorRanker`` over a read-only store, for a notebook without a service.

    Loads the configured embedder here (MiniLM: ~5 s), takes the vectors the service already
    cached in the ``embeddings`` table and embeds the rest in memory (nothing is written), and
    searches an in-memory FAISS index. ``unavailable_reason`` says why when it cannot load.
    """

    name = "minilm"

    def __init__(self, conn: sqlite3.Connection, settings: Any) -> None:
        from workbench.recall.embed import load_embedder

        self.conn = conn
        self.index: Any = None
        self.embedder, self.unavailable_reason = load_embedder(settings)
        self.embedded = self.reused = 0
        self._queries: dict[str, Any] = {}  # vector and hybrid embed the same question
        if self.embedder is not None:
            self.name = "static" if self.embedder.name.startswith("static") else "minilm"
            self._build()

    def _build(self) -> None:
        import numpy as np

        from workbench.recall import vectors

        assert self.embedder is not None
        rows = self.conn.execute(
            "SELECT id, title, subtitle, narrative, facts, concepts FROM observations ORDER BY id"
        ).fetchall()
        texts = {int(r["id"]): vectors.embed_text(r) for r in rows}
        hashes = {i: vectors.text_hash(t) for i, t in texts.items()}
        try:
            cached = vectors.cached_vectors(self.conn, self.embedder.name, set(hashes.values()))
        except sqlite3.Error:  # an older store without the cache: embed everything
            cached = {}
        missing = sorted({h: texts[i] for i, h in hashes.items() if h not in cached}.items())
        if missing:
            fresh = self.embedder.embed([text for _, text in missing])
            cached.update({h: fresh[n] for n, (h, _) in enumerate(missing)})
        self.embedded, self.reused = len(missing), len(hashes) - len(missing)
        self.index = vectors.VectorIndex(self.embedder.name, self.embedder.dim)
        order = list(texts)
        if order:
            matrix = np.stack([cached[hashes[i]] for i in order])
            self.index.add(order, [hashes[i] for i in order], matrix)

    def available(self) -> bool:
        return self.index is not None

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        if self.index is None or self.embedder is None:
            return []
        if query not in self._queries:
            self._queries[query] = self.embedder.embed([query])[0]
        return list(self.index.search(self._queries[query], k, allowed_ids))


# ----- the sweep ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    mode: str
    top_k: int
    budget: int | None  # tokens; None = no budget


@dataclass
class Sweep:
    """Rankings per (question, mode) and the metrics of every setting."""

    questions: list[Question]
    rankings: dict[tuple[int, str, str], list[Hit]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # mode -> why it did not run
    rows: list[dict[str, Any]] = field(default_factory=list)

    def frame(self) -> pl.DataFrame:
        """The metrics as a polars DataFrame (one row per setting)."""
        import polars as pl

        schema = {
            "mode": pl.Utf8, "top_k": pl.Int64, "budget": pl.Int64, "questions": pl.Int64,
            "recall": pl.Float64, "hit_rate": pl.Float64, "mrr": pl.Float64, "tokens": pl.Float64,
        }  # fmt: skip
        return pl.DataFrame(self.rows, schema=schema)

    def best(self, metric: str = "recall") -> dict[str, Any] | None:
        """The setting with the highest ``metric`` (fewest tokens on ties)."""
        if not self.rows:
            return None
        return max(self.rows, key=lambda r: (r[metric], -r["tokens"]))

    def misses(self, mode: str, k: int) -> list[Question]:
        """Questions with no gold observation in the top ``k`` of ``mode`` (the hard ones)."""
        out = []
        for q in self.questions:
            hits = self.rankings.get(_key(q, mode), [])[:k]
            if not q.gold & {h.id for h in hits}:
                out.append(q)
        return out


def _key(question: Question, mode: str) -> tuple[int, str, str]:
    return (question.id, question.source, mode)


def injected(hits: Sequence[Hit], top_k: int, budget: int | None) -> list[Hit]:
    """The hits a setting would inject: the first ``top_k``, cut at the token budget."""
    chosen: list[Hit] = []
    spent = 0
    for hit in hits[:top_k]:
        if budget is not None and spent + hit.tokens > budget:
            break
        chosen.append(hit)
        spent += hit.tokens
    return chosen


def score(question: Question, hits: Sequence[Hit]) -> tuple[float, float, float, int]:
    """(recall, hit, reciprocal rank, tokens) of one injected list."""
    found = [n for n, h in enumerate(hits, start=1) if h.id in question.gold]
    recall = len({hits[n - 1].id for n in found}) / len(question.gold) if question.gold else 0.0
    return (
        recall,
        float(bool(found)),
        (1.0 / found[0]) if found else 0.0,
        sum(h.tokens for h in hits),
    )


def sweep(
    retriever: Retriever,
    qs: Sequence[Question],
    *,
    modes: Iterable[str] = MODES,
    top_ks: Sequence[int] = TOP_KS,
    budgets: Sequence[int | None] = BUDGETS,
    scope_project: bool = True,
) -> Sweep:
    """Rank every question once per available mode, then score every setting."""
    ks = sorted(set(top_ks))
    if not ks or ks[0] < 1 or ks[-1] > MAX_EXACT_K:
        raise InvalidInput(f"top_k values must be from 1 to {MAX_EXACT_K}, got {list(top_ks)}")
    result = Sweep(list(qs))
    for mode in modes:
        if mode not in MODES:
            raise InvalidInput(f"unknown mode {mode!r}; use {', '.join(MODES)}")
        reason = retriever.unavailable(mode)
        if reason is not None:
            result.skipped[mode] = reason
            continue
        for q in result.questions:
            project = q.project if scope_project else None
            result.rankings[_key(q, mode)] = retriever.rank(q.text, mode, ks[-1], project)
        for k in ks:
            for budget in budgets:
                result.rows.append(_row(result, mode, Setting(mode, k, budget)))
    return result


def _row(result: Sweep, mode: str, setting: Setting) -> dict[str, Any]:
    scores = [
        score(q, injected(result.rankings[_key(q, mode)], setting.top_k, setting.budget))
        for q in result.questions
    ]
    n = max(len(scores), 1)
    return {
        "mode": mode,
        "top_k": setting.top_k,
        "budget": setting.budget,
        "questions": len(scores),
        "recall": round(sum(s[0] for s in scores) / n, 4),
        "hit_rate": round(sum(s[1] for s in scores) / n, 4),
        "mrr": round(sum(s[2] for s in scores) / n, 4),
        "tokens": round(sum(s[3] for s in scores) / n, 1),
    }
