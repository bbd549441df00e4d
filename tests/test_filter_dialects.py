"""One filter, two dialects: the team lake (DuckDB) selects what the local store (SQLite) does.

Real parts: the session's PostgreSQL as the DuckLake catalog, bob's observations published
with a real ``workbench publish`` run, bob's own SQLite store as the local side, and the
library every ``--team`` read uses (``workbench.team.read``). The same ``SearchFilters``
value is compiled for each side; the ids each side selects must be the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import locally_filtered
from tests.team_harness import Lake, init, machine, published_lake, seed

T = 1_780_000_000_000
HOME = "/home/bob/app"
# title -> (files_read, files_modified, concepts, type, created_ms)
ROWS: dict[str, tuple[list[str], list[str], list[str], str, int]] = {
    "refund twice": ([], [f"{HOME}/src/payments/refund.py"], ["Payments"], "bugfix", T),
    "ledger read": ([f"{HOME}/src/payments/ledger.py"], [], ["ledger"], "discovery", T + 10),
    "relative path": (["src/payments/api.py"], [], [], "feature", T + 20),
    "other module": ([], [f"{HOME}/lib/src/paymentsx/x.py"], ["cache"], "bugfix", T + 30),
    "web page": ([], [f"{HOME}/web/index.html"], [], "change", T + 86_400_000),
}


@pytest.fixture(scope="module")
def published(postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """bob's store holding ``ROWS`` (project api), published; ana's settings read the lake.

    One lake for the module (``published_lake``): every test here only reads it.
    """
    _, published = published_lake(
        postgres_cluster, tmp_path_factory.mktemp("filter-dialects"), _publish
    )
    return published


def _publish(team_lake: Lake, tmp_path: Path) -> tuple[Any, Path]:
    from workbench.models import ObservationDraft
    from workbench.settings import load_settings
    from workbench.store import observations, sessions
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["ana's own note"], at_ms=T - 1_000)
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    with Store(bob.data_dir / "workbench.db") as store, atomic(store.conn):
        sessions.ensure(store.conn, "b1", "api", "claude-code", at_ms=T)
        for title, (read, modified, concepts, kind, at_ms) in ROWS.items():
            observations.insert(
                store.conn,
                ObservationDraft(
                    type=kind,
                    title=title,
                    narrative=f"about {title}",
                    concepts=concepts,
                    files_read=read,
                    files_modified=modified,
                ),
                content_session_id="b1",
                project="api",
                prompt_number=1,
                created_ms=at_ms,
            )
    init(bob, team_lake, "api", author="bob")
    assert bob.publish_json()["added"]["observations"] == len(ROWS)
    return load_settings(ana.data_dir), bob.data_dir / "workbench.db"


def _local_titles(db: Path, filters: Any) -> set[str]:
    """What the local SQLite compiler selects from bob's store."""
    return locally_filtered(db, filters, "observations", "title")


FILTERS: list[dict[str, Any]] = [
    {"files": ["src/payments"]},
    {"files": ["./src/payments"]},
    {"files": ["payments"]},
    {"files": ["src/pay"]},
    {"files": ["src/paymentsx"]},
    {"files": ["refund.py"]},
    {"files": ["src/payments/"]},
    {"files": ["src/payments/refund.py"]},
    {"files": [f"{HOME}/src/payments"]},
    {"files": ["/src/payments"]},
    {"files": ["web", "src/payments/ledger.py"]},
    {"concepts": ["PAYMENTS", "cache"]},
    {"obs_types": ["bugfix"], "files": ["src"]},
    {"date_start": T + 15, "date_end": "2026-05-28"},
    {"project": "api", "platform_source": "claude-code", "files": ["lib/src"]},
]


@pytest.mark.parametrize("fields", FILTERS, ids=[repr(f) for f in FILTERS])
def test_the_team_lake_selects_what_the_local_store_selects(
    published: tuple[Any, Path], fields: dict[str, Any]
) -> None:
    from workbench.recall.filters import SearchFilters
    from workbench.team import read

    settings, bob_db = published
    filters = SearchFilters(**fields)
    local = _local_titles(bob_db, filters)

    r = read.reader(settings)
    try:
        lake = read.search_observations(r, None, filters=filters, limit=100)
    finally:
        r.close()

    assert {row["title"] for row in lake if row["author"] == "bob"} == local


def test_a_relative_files_prefix_selects_a_team_corpus_at_any_directory_boundary(
    published: tuple[Any, Path],
) -> None:
    """The report: ``files=src/payments`` matched ``/home/bob/app/src/payments/…`` locally but
    nothing on the team lake, where the prefix had to match from the start. And a prefix is
    whole path segments: ``src/payments`` is not ``/lib/src/paymentsx/``."""
    from workbench.knowledge.corpus_filter import parse_filter
    from workbench.team import read

    settings, _ = published

    flt = parse_filter({"files": "src/payments"})

    rows = read.corpus_rows(settings, flt.filters(), flt.query, flt.limit)

    assert sorted(row["title"] for row in rows) == [
        "ledger read",
        "refund twice",
        "relative path",
    ]


def test_a_platform_filter_keeps_a_memory_saved_without_a_session(service: Any) -> None:
    """A memory saved through an agent's MCP server has no session: its own
    ``platform_source`` says which agent saved it. The list route always read that column;
    search asked the (absent) session and lost the memory."""
    from tests.conftest import api_search

    status, saved = service.post(
        "/api/memory/save",
        {
            "text": "Refunds are idempotent per order id.",
            "project": "shop",
            "platformSource": "gemini-cli",
        },
    )
    assert status == 200, saved

    status, listed = service.get("/api/observations?platform_source=gemini-cli")
    found = api_search(
        service, "refunds idempotent", platform_source="gemini-cli", mode="fts", format="json"
    )
    listing = api_search(service, "", platform_source="gemini-cli", format="json")

    assert status == 200
    assert [o["id"] for o in listed["items"]] == [saved["id"]]
    assert [h["id"] for h in found["observations"]] == [saved["id"]]
    assert [h["id"] for h in listing["observations"]] == [saved["id"]]
