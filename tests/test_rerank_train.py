"""Training the reranker on the user's own history: generated questions, a fitted model, the CLI.

- ``generate`` is deterministic and asks summaries' requests and observations' own words;
- ``train`` (real store, a protocol-level vector ranker) fits weights that rank the held-out
  answers at least as well as the fused order on a history where the words carry the answer;
- ``workbench rerank train`` as a real subprocess with the real MiniLM writes
  ``<data_dir>/rerank.json`` and reports training and held-out figures; with semantic search
  off, or too little history, it refuses with a message that says what to do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import base_env, free_port, run_workbench
from workbench.errors import InvalidInput
from workbench.models import ObservationDraft
from workbench.recall import rerank, rerank_train
from workbench.recall.rerank_features import FEATURES
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

NOUNS = (
    "ledger invoice webhook refund cursor palette schema migration token session cache "
    "queue worker scheduler timeline cypress gateway signature payload bucket shard replica "
    "index vector tokenizer parser lexer compiler linker router handler middleware cookie "
    "header socket stream buffer thread mutex semaphore barrier kernel driver firmware "
    "sensor camera pixel shader texture sprite widget"
).split()


def seed_history(db: Path, count: int = 40) -> None:
    """``count`` observations, each with its own three nouns in title and narrative."""
    with Store(db) as store, atomic(store.conn):
        for n in range(count):
            a, b, c = (NOUNS[(n * 3 + k) % len(NOUNS)] for k in range(3))
            observations.insert(
                store.conn,
                ObservationDraft(
                    type="discovery",
                    title=f"The {a} {b} problem {n}",
                    narrative=(
                        f"We traced the {a} failure to the {b} and the {c} layer. "
                        f"Fixing the {c} ordering made the {a} tests pass again."
                    ),
                ),
                content_session_id=f"s{n % 4}",
                project="p",
            )


class WordRanker:
    """A vector ranker at the protocol level: a cosine from shared words (deterministic)."""

    name = "words"

    def __init__(self, store: Store) -> None:
        rows = store.conn.execute("SELECT id, title, narrative FROM observations").fetchall()
        self.words = {int(r[0]): set(f"{r[1]} {r[2]}".lower().split()) for r in rows}

    def available(self) -> bool:
        return True

    def rank(self, query: str, k: int, allowed: Sequence[int] | None) -> list[tuple[int, float]]:
        q = set(query.lower().split())
        pairs = [
            (i, len(q & w) / (len(q) ** 0.5 * len(w) ** 0.5))
            for i, w in self.words.items()
            if allowed is None or i in allowed
        ]
        return sorted(pairs, key=lambda p: (-p[1], p[0]))[:k]


class MisleadingRanker(WordRanker):
    """The same cosines, each given to the next memory: fusion trusts it, and is misled."""

    def rank(self, query: str, k: int, allowed: Sequence[int] | None) -> list[tuple[int, float]]:
        shifted = [(i + 1, c) for i, c in super().rank(query, len(self.words), None)]
        held = [(i, c) for i, c in shifted if i in self.words and (allowed is None or i in allowed)]
        return held[:k]


def test_generated_questions_are_deterministic_and_answerable(tmp_path: Path) -> None:
    seed_history(tmp_path / "w.db")
    with Store(tmp_path / "w.db") as store:
        first = rerank_train.generate(store.conn, limit=30, seed=1)
        assert first == rerank_train.generate(store.conn, limit=30, seed=1)
        assert first != rerank_train.generate(store.conn, limit=30, seed=2)
        assert len(first) == 30
        for q in first:
            assert q.source == "observation"
            assert len(q.gold) == 1
            assert len(q.text.split()) >= 3


def test_train_learns_to_distrust_a_misleading_ranker(tmp_path: Path) -> None:
    # The vector ranker gives each memory's similarity to its neighbour, so the fused order
    # puts the wrong memory first; the words say which is right, and training learns that.
    seed_history(tmp_path / "w.db", count=60)
    # The fusion before issue 21 (vector-led), which the misleading ranker leads astray.
    settings = load_settings(
        tmp_path,
        search_fts_weight=0.2,
        search_vector_weight=0.8,
        search_fts_gate=0.4,
        search_neighbour_weight=0.0,
    )
    with Store(tmp_path / "w.db") as store:
        ranker = MisleadingRanker(store)
        model, report = rerank_train.train(store.conn, ranker, settings, limit=60)
        again, _ = rerank_train.train(store.conn, ranker, settings, limit=60)
    assert model == again  # same history, same weights
    assert model.source == "trained"
    assert len(model.weights) == len(FEATURES)
    assert report["groups"] >= rerank_train.MIN_GROUPS
    held = report["holdout"]
    assert held["fused"]["n"] == held["reranked"]["n"] > 0
    assert held["reranked"]["mrr"] > held["fused"]["mrr"]
    assert report["train"]["reranked"]["mrr"] > report["train"]["fused"]["mrr"]
    assert model.weights != rerank.Model.default().weights
    assert set(report["weights"]) == set(FEATURES)


def test_train_refuses_too_little_history(tmp_path: Path) -> None:
    seed_history(tmp_path / "w.db", count=4)
    with Store(tmp_path / "w.db") as store, pytest.raises(InvalidInput) as err:
        rerank_train.train(store.conn, WordRanker(store), limit=40)
    assert "need 10" in str(err.value)
    assert "default" in str(err.value)


@pytest.mark.slow
def test_cli_trains_with_minilm_and_writes_the_model(data_dir: Path) -> None:
    seed_history(data_dir / "workbench.db")
    env = base_env(data_dir, free_port(), WORKBENCH_EMBEDDER="minilm")
    done = run_workbench(env, "rerank", "train", "--json", "--limit", "40", timeout=240)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["model"] == str(data_dir / "rerank.json")
    assert report["holdout"]["reranked"]["n"] > 0
    assert report["enabled"] is False
    settings = load_settings(data_dir, search_rerank=True)
    assert rerank.load_model(settings).source == "trained"
    table = run_workbench(env, "rerank", "train", "--limit", "40", timeout=240)
    assert table.returncode == 0, table.stderr
    assert "holdout" in table.stdout
    assert "reranked" in table.stdout
    assert "MRR" in table.stdout
    assert "search_rerank is off" in table.stdout


def test_cli_says_why_it_cannot_train(data_dir: Path) -> None:
    seed_history(data_dir / "workbench.db")
    env = base_env(data_dir, free_port())  # WORKBENCH_EMBEDDER=none in the tests
    done = run_workbench(env, "rerank", "train")
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "needs semantic search" in said
    assert "embedder=none" in said
    assert not (data_dir / "rerank.json").exists()
