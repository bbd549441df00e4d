"""Citable team ids: a colleague's hit is ``team:<author>:<id>``, and show / MCP / HTTP take it.

Real parts: the session's PostgreSQL as the DuckLake catalog, ana and bob publishing with
``workbench publish`` (both stores number their observations from 1, so bob's #1 is not
ana's #1), ``workbench show`` as a subprocess, ana's real service, and ``workbench mcp`` over
stdio driven by the real MCP client.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import ClientSession

from tests.conftest import Service, base_env, free_port, http_json
from tests.team_harness import Lake, Machine, init, machine, published_lake, seed
from tests.test_mcp import params, run_session, text_of

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def team(postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Machine, int]:
    """ana and bob published; returns (ana, bob's id of "cache eviction by ttl").

    One lake for the module (``published_lake``): every test only reads it. Each service test
    still starts (and stops) its own service on ana's data dir, so the CLI tests never meet a
    running one.
    """
    _, published = published_lake(
        postgres_cluster, tmp_path_factory.mktemp("team-refs"), _published
    )
    return published


def _published(team_lake: Lake, tmp_path: Path) -> tuple[Machine, int]:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["retry policy"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    bob_id = seed(bob.data_dir, "api", "b1", ["cache eviction by ttl"], narrative="ttl of 60 s")[0]
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    return ana, bob_id


@pytest.fixture
def team_service(team: tuple[Machine, int]) -> Iterator[tuple[Machine, Service, int]]:
    ana, bob_id = team
    port = free_port()
    service = Service(data_dir=ana.data_dir, port=port, env=base_env(ana.data_dir, port)).start()
    try:
        yield ana, service, bob_id
    finally:
        service.stop()


def _json(out: Any) -> Any:
    assert out.returncode == 0, out.stderr + out.stdout
    return json.loads(out.stdout)


def test_a_colleagues_hit_is_a_ref_that_show_resolves_to_their_observation(
    team: tuple[Machine, int],
) -> None:
    ana, bob_id = team

    hits = _json(ana.run("search", "--team", "--json", "eviction"))["observations"]
    ref = hits[0]["ref"]
    theirs = _json(ana.run("show", ref, "--json"))
    mine = _json(ana.run("show", str(bob_id), "--json"))  # the same number is MY observation
    text = ana.run("show", ref)

    assert ref == f"team:bob:{bob_id}"
    assert [(o["author"], o["title"], o["narrative"]) for o in theirs] == [
        ("bob", "cache eviction by ttl", "ttl of 60 s")
    ]
    assert theirs[0]["facts"] == ["fact of cache eviction by ttl"]
    assert [o["title"] for o in mine] == ["retry policy"]
    assert text.returncode == 0
    assert ref in text.stdout
    assert "bob" in text.stdout


def test_show_refuses_a_malformed_ref_and_reports_an_unknown_one(
    team: tuple[Machine, int],
) -> None:
    ana, _ = team

    malformed = ana.run("show", "team:bob:x")
    unknown = ana.run("show", "team:bob:999")
    both = ana.run("show", "team:bob:999", "1", "--json")

    assert malformed.returncode == 1
    assert "team:AUTHOR:ID" in malformed.stderr
    assert unknown.returncode == 1
    assert "not found: team:bob:999" in unknown.stderr
    assert both.returncode == 0
    assert "not found: team:bob:999" in both.stderr
    assert [o["title"] for o in json.loads(both.stdout)] == ["retry policy"]


def test_show_a_ref_without_a_team_lake_says_team_init(tmp_path: Path) -> None:
    solo = machine(tmp_path, "solo")
    seed(solo.data_dir, "api", "s1", ["x"])

    out = solo.run("show", "team:bob:1")

    assert out.returncode == 1
    assert "workbench team init" in out.stderr


def _get(service: Service, path: str) -> tuple[int, Any]:
    return http_json("GET", f"{service.url}{path}", timeout=60)


def test_http_team_observation_routes(team_service: tuple[Machine, Service, int]) -> None:
    _, service, bob_id = team_service
    ref = f"team:bob:{bob_id}"

    ok_status, ok = _get(service, f"/api/team/observation/{urllib.parse.quote(ref)}")
    bad_status, bad = _get(service, "/api/team/observation/team:bob:-1")
    gone_status, gone = _get(service, "/api/team/observation/team:bob:999")
    batch_status, batch = service.post(
        "/api/team/observations/batch", {"refs": [ref, "team:carol:3"]}
    )
    search_status, search = _get(service, "/api/search?query=eviction&format=json&team=true")

    assert ok_status == 200, ok
    assert [(o["ref"], o["title"]) for o in ok["observations"]] == [(ref, "cache eviction by ttl")]
    assert bad_status == 422
    assert "team:AUTHOR:ID" in bad["message"]
    assert gone_status == 404
    assert "team:bob:999" in gone["message"]
    assert batch_status == 200, batch
    assert [o["ref"] for o in batch["observations"]] == [ref]
    assert batch["missing"] == ["team:carol:3"]
    assert search_status == 200
    assert search["observations"][0]["ref"] == ref


def test_http_team_ref_without_a_team_lake_is_a_409(make_service: Any) -> None:
    service = make_service()

    status, body = _get(service, "/api/team/observation/team:bob:1")
    malformed, _ = _get(service, "/api/team/observation/bob-1")

    assert status == 409
    assert "workbench team init" in body["message"]
    assert malformed == 422


def test_mcp_get_observations_takes_a_ref_next_to_my_ids(
    team_service: tuple[Machine, Service, int], tmp_path: Path
) -> None:
    ana, service, bob_id = team_service

    async def script(session: ClientSession) -> tuple[str, str]:
        both = await session.call_tool("get_observations", {"ids": [f"team:bob:{bob_id}", 1]})
        bad = await session.call_tool("get_observations", {"ids": ["team:bob"]})
        return text_of(both), text_of(bad)

    both, bad = run_session(params(ana.data_dir, service.port), script, tmp_path / "mcp.log")

    records = json.loads(both)["observations"]
    assert sorted((o.get("author", "me"), o["title"]) for o in records) == [
        ("bob", "cache eviction by ttl"),
        ("me", "retry policy"),
    ]
    assert "team:AUTHOR:ID" in bad


REFS = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
    st.from_regex(r"team:[A-Za-z0-9._@+-]{1,12}:[0-9]{1,20}", fullmatch=True),
    st.builds(
        lambda a, n: f"team:{a}:{n}",
        st.text(st.characters(exclude_categories=["Cs"]), max_size=12),
        st.integers(-5, 2**70),
    ),
)


def test_any_ref_is_an_answer_or_a_precise_4xx_never_a_fault(
    team_service: tuple[Machine, Service, int],
) -> None:
    """Fuzz: hostile refs in the path and in the batch body: 200, 404 or 422, never a 5xx."""
    _, service, _ = team_service

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(ref=REFS)
    def check(ref: str) -> None:
        quoted = urllib.parse.quote(ref, safe="")
        status, body = _get(service, f"/api/team/observation/{quoted}")
        assert status in (200, 404, 422), (ref, status, body)
        if status == 422 and isinstance(body, dict) and "message" in body:
            assert "team" in body["message"], body
        b_status, b_body = service.post("/api/team/observations/batch", {"refs": [ref]})
        assert b_status in (200, 422), (ref, b_status, b_body)

    check()
