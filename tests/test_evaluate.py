"""workbench.recall.evaluate: questions from the history, injected lists, metrics, sweeps.

A small hand-made history (imported through the export format) whose gold sets are known;
the metrics of a sweep over canned rankings are checked against values computed by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from workbench.errors import InvalidInput
from workbench.recall import evaluate as ev
from workbench.settings import load_settings
from workbench.store import transfer
from workbench.store.database import Store

T0 = 1_790_000_000_000


def _obs(sid: str, project: str, n: int, minute: int, title: str, narrative: str) -> dict[str, Any]:
    return {
        "content_session_id": sid,
        "project": project,
        "prompt_number": n,
        "type": "discovery",
        "title": title,
        "narrative": narrative,
        "created_at_epoch": T0 + minute * 60_000,
    }


def _summary(
    sid: str, project: str, n: int, minute: int, request: str, learned: str
) -> dict[str, Any]:
    return {
        "content_session_id": sid,
        "project": project,
        "prompt_number": n,
        "request": request,
        "learned": learned,
        "created_at_epoch": T0 + minute * 60_000,
    }


DOCUMENT = {
    "format": "workbench-export",
    "version": 1,
    "sessions": [
        {"content_session_id": "s1", "project": "api", "started_at_epoch": T0},
        {"content_session_id": "s2", "project": "ml", "started_at_epoch": T0 + 3_600_000},
    ],
    "observations": [
        _obs(
            "s1",
            "api",
            1,
            1,
            "Read gateway/signing.py",
            "verify_signature hashes the re-encoded webhook JSON",
        ),
        _obs(
            "s1",
            "api",
            1,
            2,
            "Tests failing: webhook signature",
            "signature mismatch for a non-ASCII payload",
        ),
        _obs(
            "s1",
            "api",
            2,
            5,
            "Committed the raw body fix",
            "webhook signatures use the raw request body",
        ),
        _obs(
            "s2",
            "ml",
            1,
            61,
            "Profiled the nightly training job",
            "peak memory 38 GiB while loading the CSV",
        ),
        _obs("s2", "ml", 1, 62, "Switched to a polars lazy scan", "memory down to 2 GiB"),
    ],
    "summaries": [
        _summary(
            "s1",
            "api",
            1,
            3,
            "Why do webhook signatures fail for umlauts?",
            "The signature is computed over re-encoded JSON, not the raw body.",
        ),
        _summary("s1", "api", 2, 6, "ok fix it", "Fixed."),
        _summary(
            "s2",
            "ml",
            1,
            63,
            "Why does the nightly training run out of memory?",
            "Loading the whole CSV with pandas; polars scans lazily.",
        ),
        _summary("s2", "ml", 2, 70, "Anything else worth checking tonight?", "Nothing."),
    ],
}


@pytest.fixture
def conn(tmp_path: Path) -> Any:
    settings = load_settings(tmp_path / "data")
    with Store(settings.db_path) as store:
        transfer.import_document(store.conn, transfer.parse(DOCUMENT))
    readonly = Store(settings.db_path, readonly=True)
    yield readonly.conn
    readonly.close()


def _ids(conn: Any, *titles: str) -> frozenset[int]:
    marks = ",".join("?" * len(titles))
    rows = conn.execute(f"SELECT id FROM observations WHERE title IN ({marks})", titles)
    return frozenset(int(r[0]) for r in rows)


def test_questions_pair_each_prompt_with_its_observations(conn: Any) -> None:
    qs = ev.questions(conn)
    assert [q.text for q in qs] == [
        "Why do webhook signatures fail for umlauts?",
        "Why does the nightly training run out of memory?",
    ]  # "ok fix it" is too short; s2's second prompt produced no observation
    assert qs[0].gold == _ids(conn, "Read gateway/signing.py", "Tests failing: webhook signature")
    assert qs[1].gold == _ids(
        conn, "Profiled the nightly training job", "Switched to a polars lazy scan"
    )
    assert (qs[0].project, qs[0].prompt_number, qs[0].source) == ("api", 1, "request")
    short = ev.questions(conn, min_words=1)
    assert [q.gold for q in short if q.prompt_number == 2] == [
        _ids(conn, "Committed the raw body fix")
    ]


def test_question_sources_projects_and_sampling(conn: Any) -> None:
    both = ev.questions(conn, sources=("request", "learned"))
    assert [q.source for q in both] == ["request", "learned", "request", "learned"]
    assert [q.project for q in ev.questions(conn, project="ml")] == ["ml"]
    sample = ev.questions(conn, sources=("request", "learned"), limit=2, seed=3)
    assert sample == ev.questions(conn, sources=("request", "learned"), limit=2, seed=3)
    assert len(sample) == 2
    with pytest.raises(InvalidInput, match="question source"):
        ev.questions(conn, sources=("answer",))


def test_injected_stops_at_top_k_and_at_the_first_hit_over_budget() -> None:
    hits = [ev.Hit(1, 100), ev.Hit(2, 200), ev.Hit(3, 50)]
    assert ev.injected(hits, 2, None) == hits[:2]
    assert ev.injected(hits, 3, 250) == hits[:1]  # 100 + 200 > 250: cut there, like a context
    assert ev.injected(hits, 3, 50) == []
    assert ev.injected(hits, 3, 1000) == hits


def test_score_of_one_injected_list() -> None:
    question = ev.Question(1, "request", "q", "api", "s1", 1, frozenset({1, 2}))
    assert ev.score(question, [ev.Hit(3, 10), ev.Hit(1, 20), ev.Hit(4, 30)]) == (0.5, 1.0, 0.5, 60)
    assert ev.score(question, [ev.Hit(2, 5), ev.Hit(1, 5)]) == (1.0, 1.0, 1.0, 10)
    assert ev.score(question, []) == (0.0, 0.0, 0.0, 0)


class Canned:
    """A retriever with fixed rankings per mode (and one mode it cannot run)."""

    def __init__(self, rankings: dict[str, list[ev.Hit]]) -> None:
        self.rankings = rankings
        self.calls: list[tuple[str, str, int, str | None]] = []

    def unavailable(self, mode: str) -> str | None:
        return None if mode in self.rankings else f"{mode} is switched off"

    def rank(self, query: str, mode: str, k: int, project: str | None) -> list[ev.Hit]:
        self.calls.append((query, mode, k, project))
        return self.rankings[mode][:k]


def test_sweep_metrics_match_hand_computed_values() -> None:
    q = ev.Question(7, "request", "why?", "api", "s1", 1, frozenset({10, 11}))
    canned = Canned(
        {
            "fts": [ev.Hit(10, 100), ev.Hit(99, 100), ev.Hit(11, 100)],
            "vector": [ev.Hit(98, 100), ev.Hit(11, 100), ev.Hit(10, 100)],
        }
    )
    result = ev.sweep(canned, [q], top_ks=(1, 3), budgets=(None, 150))
    assert result.skipped == {"hybrid": "hybrid is switched off"}
    assert canned.calls == [("why?", "fts", 3, "api"), ("why?", "vector", 3, "api")]
    rows = {(r["mode"], r["top_k"], r["budget"]): r for r in result.rows}
    assert rows[("fts", 1, None)] == {
        "mode": "fts", "top_k": 1, "budget": None, "questions": 1,
        "recall": 0.5, "hit_rate": 1.0, "mrr": 1.0, "tokens": 100.0,
    }  # fmt: skip
    assert (rows[("fts", 3, None)]["recall"], rows[("fts", 3, None)]["mrr"]) == (1.0, 1.0)
    assert (rows[("vector", 1, None)]["recall"], rows[("vector", 1, None)]["hit_rate"]) == (
        0.0,
        0.0,
    )
    assert rows[("vector", 3, None)]["mrr"] == 0.5
    assert rows[("vector", 3, 150)]["tokens"] == 100.0  # the budget keeps one hit
    assert result.best()["mode"] == "fts"
    assert result.misses("vector", 1) == [q]
    assert result.misses("fts", 1) == []
    frame = result.frame()
    assert frame.height == 8
    assert set(frame["mode"]) == {"fts", "vector"}


def test_sweep_refuses_settings_it_cannot_compute_exactly() -> None:
    canned = Canned({"fts": []})
    with pytest.raises(InvalidInput, match="top_k"):
        ev.sweep(canned, [], top_ks=(5, 50))
    with pytest.raises(InvalidInput, match="unknown mode"):
        ev.sweep(canned, [], modes=("bm25",))


class WordOverlap:
    """A deterministic stand-in for an embedding ranker: shared words with each observation."""

    name = "overlap"

    def __init__(self, conn: Any) -> None:
        self.texts = {
            int(r[0]): set(f"{r[1]} {r[2]}".lower().split())
            for r in conn.execute("SELECT id, title, narrative FROM observations")
        }

    def available(self) -> bool:
        return True

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        words = set(query.lower().replace("?", "").split())
        pool = self.texts if allowed_ids is None else {i: self.texts[i] for i in allowed_ids}
        scored = sorted(((len(words & t), i) for i, t in pool.items()), key=lambda p: (-p[0], p[1]))
        return [(i, float(s)) for s, i in scored[:k]]


def test_local_retriever_runs_every_mode_the_engine_can(conn: Any) -> None:
    qs = ev.questions(conn)
    text_only = ev.sweep(ev.LocalRetriever(conn), qs, top_ks=(1, 2), budgets=(None,))
    assert set(text_only.skipped) == {"vector", "hybrid"}
    assert {r["mode"] for r in text_only.rows} == {"fts"}
    best = {(r["top_k"]): r for r in text_only.rows}
    assert best[2]["hit_rate"] == 1.0  # each question's own observations rank first by BM25
    every = ev.sweep(ev.LocalRetriever(conn, WordOverlap(conn)), qs, top_ks=(1, 2), budgets=(None,))
    assert every.skipped == {}
    assert {r["mode"] for r in every.rows} == {"fts", "vector", "hybrid"}
    for row in every.rows:
        assert 0.0 <= row["recall"] <= 1.0
        assert 0.0 <= row["mrr"] <= 1.0
    scoped = {h.id for h in every.rankings[(qs[1].id, "request", "vector")]}
    assert scoped <= _ids(
        conn, "Profiled the nightly training job", "Switched to a polars lazy scan"
    )


def test_a_missing_model_is_reported_not_raised(conn: Any, tmp_path: Path) -> None:
    ranker = ev.InProcessRanker(conn, load_settings(tmp_path / "other", embedder="none"))
    assert not ranker.available()
    assert ranker.unavailable_reason
    result = ev.sweep(ev.LocalRetriever(conn, ranker), ev.questions(conn), top_ks=(1,))
    assert set(result.skipped) == {"vector", "hybrid"}
    assert all(result.skipped.values())
