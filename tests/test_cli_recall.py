"""``workbench search | timeline | show`` against a real service, and read-only without one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tests.conftest import Service, base_env, free_port
from tests.relevance_set import Seeded, seed
from workbench.cli.main import app
from workbench.store.database import Store


@pytest.fixture(scope="module")
def seeded_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Seeded]]:
    data_dir: Path = tmp_path_factory.mktemp("cli") / "data"
    data_dir.mkdir()
    with Store(data_dir / "workbench.db") as store:
        labels = seed(store)
    port = free_port()
    env = base_env(data_dir, port, WORKBENCH_EMBEDDER="none")
    service = Service(data_dir=data_dir, port=port, env=env).start()
    yield service, labels
    service.stop()


@pytest.fixture
def labels(seeded_service: tuple[Service, Seeded]) -> Seeded:
    return seeded_service[1]


def run(service: Service, *args: str, up: bool = True) -> Result:
    """Run the CLI in-process against the service (``up``) or a port nobody listens on."""
    port = service.port if up else free_port()
    env = {"WORKBENCH_DATA_DIR": str(service.data_dir), "WORKBENCH_PORT": str(port)}
    return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def svc(seeded_service: tuple[Service, Seeded]) -> Service:
    return seeded_service[0]


def test_search_json_is_the_api_contract(svc: Service, labels: Seeded) -> None:
    data = as_json(run(svc, "search", "why were refunds charged twice", "--json"))
    assert {"observations", "sessions", "prompts", "totalResults", "query"} <= set(data)
    assert data["observations"][0]["id"] == labels.ids["refund-idempotency"]


def test_search_filters_and_options(svc: Service, labels: Seeded) -> None:
    data = as_json(
        run(
            svc,
            "search",
            "retry",
            "--project",
            "webapp",
            "--obs-type",
            "change,feature",
            "--type",
            "observations",
            "--since",
            "2026-11-19",
            "--until",
            "2026-11-19",
            "--mode",
            "fts",
            "--limit",
            "5",
            "--json",
        )
    )
    assert [h["id"] for h in data["observations"]] == [labels.ids["web-retry-fetch"]]
    assert data["sessions"] == []
    assert data["prompts"] == []
    listing = as_json(
        run(
            svc,
            "search",
            "--files",
            "src/auth",
            "--files",
            "src/hooks",
            "--order-by",
            "date_asc",
            "--json",
        )
    )
    assert {h["id"] for h in listing["observations"]} == {
        labels.ids["auth-redirect-loop"],
        labels.ids["samesite-cookie"],
        labels.ids["ws-leak"],
    }


def test_search_table_for_people(svc: Service, labels: Seeded) -> None:
    result = run(svc, "search", "docker image too large", "--type", "observations")
    assert result.exit_code == 0, result.output
    assert "Multi-stage" in result.stdout  # rich folds long titles at 80 columns
    assert str(labels.ids["docker-slim"]) in result.stdout
    assert "workbench timeline" in result.stdout


def test_search_errors_are_one_line(svc: Service) -> None:
    result = run(svc, "search")
    assert result.exit_code == 1
    assert "give a query or at least one filter" in result.stderr
    bad = run(svc, "search", "x", "--obs-type", "nope")
    assert bad.exit_code == 1
    assert "allowed: decision" in bad.stderr


def test_timeline(svc: Service, labels: Seeded) -> None:
    anchor = labels.ids["orders-index"]
    data = as_json(run(svc, "timeline", str(anchor), "--before", "1", "--after", "1", "--json"))
    assert data["anchor"]["id"] == anchor
    assert [i["id"] for i in data["items"] if i["is_anchor"]] == [anchor]
    by_query = as_json(run(svc, "timeline", "--query", "orders composite index", "--json"))
    assert by_query["anchor"]["id"] == anchor
    table = run(svc, "timeline", f"S{labels.summaries['pay-2']}")
    assert table.exit_code == 0, table.output
    assert "timeline around #S" in table.stdout
    neither = run(svc, "timeline")
    assert neither.exit_code == 1
    assert "give an anchor or a query" in neither.stderr


def test_show(svc: Service, labels: Seeded) -> None:
    ids = [labels.ids["ws-leak"], labels.ids["oom-worker"]]
    data = as_json(run(svc, "show", str(ids[0]), f"#{ids[1]}", "--json"))
    assert {o["id"] for o in data} == set(ids)
    assert all(o["narrative"] for o in data)
    table = run(svc, "show", f"{ids[0]},{ids[1]}")
    assert "Heap snapshots grew" in table.stdout
    missing = run(svc, "show", "424242")
    assert missing.exit_code == 1
    assert "not found: 424242" in missing.stderr
    bad = run(svc, "show", "abc")
    assert bad.exit_code == 1
    assert "not an observation id" in bad.stderr


def test_without_the_service_reads_the_database_read_only(svc: Service, labels: Seeded) -> None:
    result = run(svc, "search", "the docker image is too big", "--json", up=False)
    assert "not running" in result.stderr
    assert "read-only" in result.stderr
    data = as_json(result)
    assert data["observations"][0]["id"] == labels.ids["docker-slim"]
    assert data["mode"] == "fts"
    assert data["degraded"]
    timeline = as_json(run(svc, "timeline", str(labels.ids["docker-slim"]), "--json", up=False))
    assert any(i["is_anchor"] for i in timeline["items"])
    shown = as_json(run(svc, "show", str(labels.ids["docker-slim"]), "--json", up=False))
    assert shown[0]["title"].startswith("Multi-stage Dockerfile")
