"""Hybrid never loses to its parts: a small conversation relevance set, real MiniLM, real search.

The set is ``bench/relevance_set_conversations.py`` with 3 small-talk turns a session (115
memories, 53 questions in four classes). Every memory goes through the store (FTS5 by its
triggers), the real MiniLM model embeds it into a real FAISS index, and each ranker runs
through ``SearchEngine.search`` as the service runs it. Per class, hybrid's R@10 and MRR must
reach the better of full text and vectors, and over the set (the class-balanced mean of R@5,
R@10 and MRR, the objective ``bench/relevance_cv.py`` chooses the defaults by) so must hybrid.
(Issue 21: chosen across four sets, the defaults give multi-hop R@5 0.773 here where vectors
give 0.818, half of one question's evidence in an 11-question class; per class and R@5 is no
longer held.) The old RRF fusion did not (it falls
to R@5 0.53 on paraphrases where vectors reach 0.93): the last assertion keeps that visible.

One model load for the whole module (``tests/shared_model.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.relevance_set_conversations import CLASSES, build
from tests.shared_model import minilm
from workbench.models import ObservationDraft
from workbench.recall import vectors
from workbench.recall.search import SearchEngine
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow

METRICS = ("R@5", "R@10", "MRR")


class MiniLMRanker:
    """The vector ranker the service builds, reduced to its parts: MiniLM and a FAISS index."""

    name = "minilm"

    def __init__(self, index: vectors.VectorIndex) -> None:
        self.index = index
        self.queries: dict[str, Any] = {}

    def available(self) -> bool:
        return True

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        if query not in self.queries:
            self.queries[query] = minilm().embed([query])[0]
        return self.index.search(self.queries[query], k, allowed_ids)


@pytest.fixture(scope="module")
def loaded(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Store, MiniLMRanker, list[tuple[str, str, tuple[int, ...]]]]]:
    conv = build(small_talk=3)
    store = Store(tmp_path_factory.mktemp("conversations") / "workbench.db")
    ids = []
    with atomic(store.conn):
        for n, turn in enumerate(conv.turns):
            oid, created = observations.insert(
                store.conn,
                ObservationDraft(title=turn.text),
                content_session_id=f"conv-{turn.session:02d}",
                project="life",
                created_ms=conv.session_ms(turn.session) + n * 60_000,
            )
            assert created
            ids.append(oid)
    rows = store.conn.execute(
        "SELECT id, title, subtitle, narrative, facts, concepts FROM observations ORDER BY id"
    ).fetchall()
    texts = [vectors.embed_text(r) for r in rows]
    index = vectors.VectorIndex(minilm().name, minilm().dim, "flat")
    index.add([r["id"] for r in rows], [vectors.text_hash(t) for t in texts], minilm().embed(texts))
    questions = [(q.cls, q.text, tuple(ids[i] for i in q.evidence)) for q in conv.questions]
    yield store, MiniLMRanker(index), questions
    store.close()


def measure(engine: SearchEngine, mode: str, questions: Sequence[Any]) -> dict[str, list[float]]:
    """class -> [R@5, R@10, MRR] of ``mode`` through the engine, 50 hits deep."""
    per: dict[str, list[tuple[float, float, float]]] = {}
    for cls, text, relevant in questions:
        found = [h.id for h in engine.search(text, types="observations", mode=mode, limit=50)
                 .observations]  # fmt: skip
        gold = set(relevant)
        first = next((n for n, i in enumerate(found, start=1) if i in gold), None)
        per.setdefault(cls, []).append(
            (
                len(gold & set(found[:5])) / len(gold),
                len(gold & set(found[:10])) / len(gold),
                1 / first if first else 0.0,
            )
        )
    return {c: [sum(m[k] for m in ms) / len(ms) for k in range(3)] for c, ms in per.items()}


def test_hybrid_reaches_the_best_of_its_parts_in_every_class(loaded: Any, tmp_path: Path) -> None:
    store, ranker, questions = loaded
    assert {q[0] for q in questions} == set(CLASSES)
    engine = SearchEngine(store, load_settings(tmp_path), ranker)
    text = measure(engine, "fts", questions)
    vector = measure(engine, "vector", questions)
    hybrid = measure(engine, "hybrid", questions)
    for cls in CLASSES:
        for k, metric in list(enumerate(METRICS))[1:]:  # R@10, MRR
            best = max(text[cls][k], vector[cls][k])
            assert hybrid[cls][k] >= best - 1e-9, (
                f"{cls} {metric}: hybrid {hybrid[cls][k]:.3f} < best part {best:.3f} "
                f"(fts {text[cls][k]:.3f}, vector {vector[cls][k]:.3f})"
            )

    def balanced(by_class: dict[str, list[float]]) -> float:
        return sum(sum(m) / 3 for m in by_class.values()) / len(by_class)

    assert balanced(hybrid) >= max(balanced(text), balanced(vector))
    # The parts really differ (else the test could not fail): full text finds no paraphrase,
    # and vectors rank single-hop answers lower than full text does.
    assert text["paraphrase"][1] == 0.0 < vector["paraphrase"][1]
    assert vector["single-hop"][2] < text["single-hop"][2]
    # And the fusion this replaces lost to vectors on paraphrases.
    old = measure(
        SearchEngine(store, load_settings(tmp_path, search_fusion="rrf"), ranker),
        "hybrid",
        questions,
    )
    assert old["paraphrase"][0] < vector["paraphrase"][0]
