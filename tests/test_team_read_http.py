"""``/api/search?team=true``, ``/api/timeline?team=true`` and the MCP tools' ``team`` flag.

Real parts: the session's PostgreSQL as the DuckLake catalog, two authors publishing with
``workbench publish``, ana's real service (``python -m service``) and ``workbench mcp`` over
stdio driven by the real MCP client. Every test that needs the team only reads it, so they
share one module-scoped lake and service (``team_service``).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.conftest import Service, base_env, free_port, http_json
from tests.team_harness import Lake, Machine, init, machine, seed
from tests.test_mcp import params, run_session, text_of

pytestmark = pytest.mark.slow

T = 1_780_000_000_000


@pytest.fixture(scope="module")
def team_service(
    postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Machine, Service, int]]:
    """ana's service after ana and bob published; yields (ana, service, ana's first id).

    One for the module (issue 23): its tests only read, and two publishes and a start-up cost
    more than any of them. Full text only, as under ``_clean_env``, which it precedes.
    """
    tmp_path = tmp_path_factory.mktemp("team-http")
    team_lake = Lake(postgres_cluster, postgres_cluster.new_database(), tmp_path / "lake")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("WORKBENCH_EMBEDDER", "none")  # copied into each machine's environment
        yield from _team_service(team_lake, tmp_path)


def _team_service(team_lake: Lake, tmp_path: Path) -> Iterator[tuple[Machine, Service, int]]:
    ana = machine(tmp_path, "ana")
    first = seed(ana.data_dir, "api", "a1", ["cache layer"], at_ms=T)[0]
    seed(ana.data_dir, "api", "a1", ["cache late"], at_ms=T + 10_000)
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    seed(bob.data_dir, "api", "b1", ["cache eviction"], at_ms=T + 5_000)
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    port = free_port()
    service = Service(data_dir=ana.data_dir, port=port, env=base_env(ana.data_dir, port)).start()
    try:
        yield ana, service, first
    finally:
        service.stop()


def _get(service: Service, path: str, **query: Any) -> tuple[int, Any]:
    return http_json("GET", f"{service.url}{path}?{urllib.parse.urlencode(query)}", timeout=60)


def test_search_route_team_json_names_authors_local_once(team_service: Any) -> None:
    _, service, _ = team_service

    status, body = _get(service, "/api/search", query="cache", format="json", team="true")

    assert status == 200, body
    assert sorted((h["author"], h["title"]) for h in body["observations"]) == [
        ("bob", "cache eviction"),
        ("me", "cache late"),
        ("me", "cache layer"),
    ]
    assert body["teamResults"] == 1


def test_search_route_team_text_marks_colleagues(team_service: Any) -> None:
    _, service, _ = team_service

    status, body = _get(service, "/api/search", query="eviction", team="true")

    assert status == 200
    assert "cache eviction  @bob" in body
    assert "with the team (snapshot" in body


def test_timeline_route_team_interleaves(team_service: Any) -> None:
    _, service, first = team_service

    status, body = _get(service, "/api/timeline", anchor=first, depth_after=1, team="true")

    assert status == 200, body
    assert [(i["author"], i["title"]) for i in body["items"]] == [
        ("me", "cache layer"),
        ("bob", "cache eviction"),
        ("me", "cache late"),
    ]


@pytest.mark.parametrize("path", ["/api/search", "/api/timeline"])
def test_a_team_value_that_is_not_a_boolean_is_a_422(team_service: Any, path: str) -> None:
    _, service, first = team_service

    status, body = _get(service, path, anchor=first, team="maybe")

    assert status == 422
    assert "team" in str(body)


def test_team_on_a_service_without_team_settings_says_team_init(make_service: Any) -> None:
    service = make_service()

    status, body = _get(service, "/api/search", query="x", team="true")

    assert status == 409
    assert "workbench team init" in str(body)


def test_mcp_search_and_timeline_take_team(team_service: Any, tmp_path: Path) -> None:
    ana, service, first = team_service

    async def script(session: ClientSession) -> tuple[str, str, str]:
        found = await session.call_tool("search", {"query": "eviction", "team": True})
        alone = await session.call_tool("search", {"query": "eviction"})
        around = await session.call_tool(
            "timeline", {"anchor": first, "depth_after": 1, "team": True}
        )
        return text_of(found), text_of(alone), text_of(around)

    found, alone, around = run_session(
        params(ana.data_dir, service.port), script, tmp_path / "mcp.log"
    )

    assert "cache eviction  @bob" in found
    assert "@bob" not in alone
    assert "cache eviction  @bob" in around
