"""A project filter reaches the vector index as a project, not as a list of ids.

Real SQLite, real FAISS, the real MiniLM (shared per session), a real ``Indexer``: the
search must not run the SQL that collected a project's ids, must give the results the id
list gave, and must never return another project's observation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.shared_model import minilm
from workbench.models import ObservationDraft
from workbench.recall.filters import SearchFilters
from workbench.recall.indexer import Indexer
from workbench.recall.search import SearchEngine
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

NOTES = [
    ("Stripe webhook retries caused duplicate refunds", "Added idempotency keys per event."),
    ("Pillow images not closed in thumbnail worker", "RSS grew to 3 GB over a day."),
    ("Multi-stage Docker build", "The image went from 1.2 GB to 180 MB."),
    ("Websocket dropped behind load balancer", "Heartbeat ping every 25 s keeps it open."),
    ("Refund job double-charged a customer", "The retry ran after a timeout that succeeded."),
    ("Cache stampede on the catalog page", "Added jittered expiry and a lock per key."),
]


@pytest.fixture
def indexed(tmp_path: Path) -> Any:
    with Store(tmp_path / "workbench.db") as store:
        projects = ["payments", "webapp", "infra"]
        with atomic(store.conn):
            ids = {
                observations.insert(
                    store.conn, ObservationDraft(title=f"{t} ({n})", narrative=body),
                    content_session_id="s", project=projects[n % 3],
                )[0]: projects[n % 3]
                for n in range(24) for t, body in [NOTES[n % len(NOTES)]]
            }  # fmt: skip
        model = minilm()
        settings = load_settings(tmp_path, embedder="minilm")
        indexer = Indexer(store, settings, lambda _: (model, "minilm loaded"))
        indexer.load()
        indexer.sync()
        yield store, indexer, ids


@pytest.mark.slow
def test_a_project_filter_runs_no_id_collecting_sql_and_matches_the_id_list(indexed: Any) -> None:
    store, indexer, ids = indexed
    engine = SearchEngine(store, indexer.settings, indexer.ranker)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    result = engine.search(
        "customer charged twice", SearchFilters(project="payments"), mode="vector"
    )
    store.conn.set_trace_callback(None)
    assert not [s for s in statements if "SELECT o.id FROM observations o" in s]
    got = [h.id for h in result.observations]
    members = [i for i, p in ids.items() if p == "payments"]
    old = [i for i, _ in indexer.ranker.rank("customer charged twice", 20, members)]
    assert got == old
    assert got
    assert {ids[i] for i in got} == {"payments"}


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_filtered_search_never_leaks_another_project(indexed: Any, mode: str) -> None:
    store, indexer, ids = indexed
    engine = SearchEngine(store, indexer.settings, indexer.ranker)
    for project in ("payments", "webapp", "infra"):
        for query in ("refund retries", "image memory", "load balancer heartbeat"):
            result = engine.search(query, SearchFilters(project=project), mode=mode)
            assert {ids[h.id] for h in result.observations} <= {project}
    both = engine.search("refund", SearchFilters(projects=["webapp", "infra"]), mode=mode)
    assert {ids[h.id] for h in both.observations} <= {"webapp", "infra"}


def test_other_filters_keep_the_id_list_path(indexed: Any) -> None:
    store, indexer, ids = indexed
    engine = SearchEngine(store, indexer.settings, indexer.ranker)
    filters = SearchFilters(project="infra", obs_types=["bugfix", "discovery", "change"])
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    result = engine.search("docker image", filters, mode="vector")
    store.conn.set_trace_callback(None)
    assert [s for s in statements if "SELECT o.id FROM observations o" in s]
    assert {ids[h.id] for h in result.observations} <= {"infra"}
