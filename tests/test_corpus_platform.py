"""Corpora of one agent platform: ``platformSource`` in the corpus filter, frozen into the
stored filter, honoured by ``rebuild``; over HTTP (in-process), the CLI and the MCP tool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from service.app import create_app
from tests.conftest import Service, seeded_service
from tests.platform_seed import TITLES, at, seed
from workbench.cli.main import app
from workbench.knowledge import corpus
from workbench.knowledge.corpus_filter import parse_filter
from workbench.models import ObservationDraft
from workbench.platforms import PLATFORM_SOURCES
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    settings = load_settings(data_dir)
    with TestClient(create_app(settings), base_url=settings.base_url) as test_client:
        seed(test_client.app.state.runtime.store)  # type: ignore[attr-defined]
        yield test_client


def titles(settings_dir: Path, name: str) -> set[str]:
    loaded = corpus.load(load_settings(settings_dir), name)
    return {o.title for o in loaded.observations}


@pytest.mark.parametrize("key", ["platformSource", "platform_source"])
def test_a_corpus_keeps_one_platform_and_stores_it_in_its_filter(
    client: TestClient, data_dir: Path, key: str
) -> None:
    response = client.post("/api/corpus", json={"name": "gem", key: "gemini-cli"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["filter"]["platform_source"] == "gemini-cli"
    assert "platformSource" not in body["filter"]
    assert body["stats"]["observation_count"] == 2
    assert titles(data_dir, "gem") == {TITLES["shop-gemini"], TITLES["blog-gemini"]}


def test_a_query_corpus_keeps_one_platform(client: TestClient, data_dir: Path) -> None:
    response = client.post(
        "/api/corpus", json={"name": "q", "query": "added", "platformSource": "codex-cli"}
    )
    assert response.status_code == 200, response.text
    assert titles(data_dir, "q") == {TITLES["shop-codex"]}


def test_rebuild_honours_the_stored_platform(client: TestClient, data_dir: Path) -> None:
    assert client.post(
        "/api/corpus", json={"name": "gem", "platformSource": "gemini-cli"}
    ).is_success
    store = client.app.state.runtime.store  # type: ignore[attr-defined]
    with atomic(store.conn) as conn:
        for sid, title in (
            ("blog-gemini", "Gemini cached the feed"),
            ("shop-claude", "Claude too"),
        ):
            observations.insert(
                conn,
                ObservationDraft(title=title, narrative=title),
                content_session_id=sid,
                project=sid.split("-")[0],
                created_ms=at(20, 10),
            )
    response = client.post("/api/corpus/gem/rebuild")
    assert response.status_code == 200, response.text
    assert response.json()["added"] == 1
    assert response.json()["filter"]["platform_source"] == "gemini-cli"
    assert "Gemini cached the feed" in titles(data_dir, "gem")
    assert "Claude too" not in titles(data_dir, "gem")


@pytest.mark.parametrize("value", ["gemini", "Codex-CLI", "cursor-ide"])
def test_an_unknown_platform_is_a_422_listing_the_known_ones(
    client: TestClient, value: str
) -> None:
    response = client.post("/api/corpus", json={"name": "x", "platformSource": value})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "UNKNOWN_PLATFORM"
    assert "platformSource" in body["message"]
    assert body["known"] == list(PLATFORM_SOURCES)


@pytest.mark.parametrize("value", [3, ["gemini-cli"], {"a": 1}])
def test_a_platform_that_is_not_text_is_a_400(client: TestClient, value: Any) -> None:
    response = client.post("/api/corpus", json={"name": "x", "platformSource": value})
    assert response.status_code == 400, response.text
    assert "platformSource must be text" in response.json()["message"]


def test_both_spellings_must_agree() -> None:
    assert parse_filter({"platform_source": "codex-cli", "platformSource": "codex-cli"})
    with pytest.raises(
        Exception, match="platformSource='gemini-cli' and platform_source='codex-cli' disagree"
    ):
        parse_filter({"platform_source": "codex-cli", "platformSource": "gemini-cli"})


def test_the_description_names_the_platform() -> None:
    assert "platform_source=gemini-cli" in parse_filter({"platformSource": "gemini-cli"}).describe()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("corpus-platform") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        yield service


def test_cli_corpus_build_takes_a_platform(live: Service) -> None:
    env = {"WORKBENCH_DATA_DIR": str(live.data_dir), "WORKBENCH_PORT": str(live.port)}
    args = ["corpus", "build", "codex", "--platform", "codex-cli", "--json"]
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)
    assert built["filter"]["platform_source"] == "codex-cli"
    assert built["stats"]["observation_count"] == 1
    bad = CliRunner().invoke(app, [*args[:3], "--platform", "codex"], env=env)
    assert bad.exit_code == 1
    assert "'codex' is not a known platform" in bad.stderr


def test_mcp_build_corpus_takes_a_platform(live: Service) -> None:
    from mcp import ClientSession

    from tests.test_mcp import params, run_session, text_of

    async def script(session: ClientSession) -> str:
        built = await session.call_tool(
            "build_corpus", {"name": "mcp-gem", "platformSource": "gemini-cli"}
        )
        return text_of(built)

    server = params(live.data_dir, live.port)
    text = run_session(server, script, live.data_dir.parent / "mcp-stderr.log")
    assert json.loads(text)["filter"]["platform_source"] == "gemini-cli"
    assert titles(live.data_dir, "mcp-gem") == {TITLES["shop-gemini"], TITLES["blog-gemini"]}


def test_the_corpus_notebook_filters_by_platform(live: Service) -> None:
    from notebooks import corpus_builder

    args = corpus_builder.parse_args(["--data-dir", str(live.data_dir), "--platform", "codex-cli"])
    _, defs = corpus_builder.app.run(defs={"args": args})
    assert defs["wire"]["platform_source"] == "codex-cli"
    assert [o.title for o in defs["preview"].observations] == [TITLES["shop-codex"]]
