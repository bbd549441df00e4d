"""Analytics by agent platform: every ``/api/stats/*`` route and ``workbench stats`` take a
``platform_source`` filter, ``activity`` groups by it, ``/api/stats`` counts per platform, and
every DuckDB view carries the column (prompts and summaries take their session's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import Service, seeded_service
from tests.platform_seed import SESSIONS, seed
from workbench.cli.main import app
from workbench.platforms import PLATFORM_SOURCES

ROUTES = ("economics", "types", "activity", "files", "concepts", "cooccurrence", "sessions", "roi")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("stats-platform-filter") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        # The first statistic loads DuckDB and polars in the service: allow a slow machine.
        status, _ = service.get("/api/stats/types", timeout=60)
        assert status == 200
        # One SessionStart block per project fills the injection ledger (for ROI).
        for project in ("shop", "blog"):
            status, _ = service.get(f"/api/context/inject?projects={project}&contentSessionId=n")
            assert status == 200
        yield service


def get(service: Service, path: str) -> dict:
    status, body = service.get(path)
    assert status == 200, body
    return body


def test_economics_keeps_one_platform(seeded: Service) -> None:
    body = get(seeded, "/api/stats/economics?platform_source=gemini-cli")
    assert {row["project"]: row["observations"] for row in body["items"]} == {"shop": 1, "blog": 1}
    body = get(seeded, "/api/stats/economics?project=shop&platformSource=gemini-cli")
    assert [row["observations"] for row in body["items"]] == [1]
    assert body["summary"]["discovery_tokens"] == 200  # shop-gemini, on day 2


def test_activity_by_platform_counts_prompts_and_summaries_through_their_session(
    seeded: Service,
) -> None:
    body = get(seeded, "/api/stats/activity?by=platform_source")
    rows = {row["platform_source"]: row for row in body["items"]}
    assert set(rows) == {"claude-code", "gemini-cli", "codex-cli"}
    for kind in ("sessions", "prompts", "observations", "summaries"):
        assert rows["gemini-cli"][kind] == 2, kind
        assert rows["codex-cli"][kind] == 1, kind


def test_activity_filtered_by_platform_filters_every_kind(seeded: Service) -> None:
    body = get(seeded, "/api/stats/activity?by=project&platform_source=codex-cli")
    assert [
        (r["project"], r["sessions"], r["prompts"], r["observations"], r["summaries"])
        for r in body["items"]
    ] == [("shop", 1, 1, 1, 1)]


def test_concepts_sessions_and_roi_keep_one_platform(seeded: Service) -> None:
    concepts = get(seeded, "/api/stats/concepts?platform_source=codex-cli")["items"]
    assert [row["concept"] for row in concepts] == ["codex-cli"]
    sessions = get(seeded, "/api/stats/sessions?platform_source=gemini-cli")["items"]
    assert sorted(row["content_session_id"] for row in sessions) == ["blog-gemini", "shop-gemini"]
    assert {row["platform_source"] for row in sessions} == {"gemini-cli"}
    roi = get(seeded, "/api/stats/roi?platform_source=claude-code")
    assert [row["project"] for row in roi["items"]] == ["shop"]
    assert roi["summary"]["items_shown"] == 1


@pytest.mark.parametrize("route", ROUTES)
def test_an_unknown_platform_is_a_422_on_every_route(seeded: Service, route: str) -> None:
    status, body = seeded.get(f"/api/stats/{route}?platform_source=gemini")
    assert status == 422, body
    assert body["error"] == "UNKNOWN_PLATFORM"
    assert body["known"] == list(PLATFORM_SOURCES)


def test_the_overview_counts_sessions_and_observations_per_platform(seeded: Service) -> None:
    platforms = get(seeded, "/api/stats")["platforms"]
    assert platforms == {
        "gemini-cli": {"sessions": 2, "observations": 2},
        "claude-code": {"sessions": 1, "observations": 1},
        "codex-cli": {"sessions": 1, "observations": 1},
    }


def cli(service: Service, *args: str) -> tuple[int, str, str]:
    env = {"WORKBENCH_DATA_DIR": str(service.data_dir), "WORKBENCH_PORT": str(service.port)}
    result = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_stats_takes_a_platform(seeded: Service) -> None:
    code, out, err = cli(
        seeded, "stats", "activity", "--by", "project", "--platform", "gemini-cli", "--json"
    )
    assert code == 0, err
    items = json.loads(out)["items"]
    assert {row["project"]: row["observations"] for row in items} == {"blog": 1, "shop": 1}


def test_cli_stats_refuses_an_unknown_platform_naming_the_known_ones(seeded: Service) -> None:
    code, _, err = cli(seeded, "stats", "economics", "--platform", "gemini")
    assert code == 1
    assert "'gemini' is not a known platform" in err
    assert all(name in err for name in PLATFORM_SOURCES)


def test_every_view_carries_the_platform(seeded: Service) -> None:
    from workbench.store import duck

    con = duck.connect(seeded.data_dir / "workbench.db")
    try:
        for view in ("sessions", "observations", "prompts", "summaries"):
            rows = con.execute(
                f"SELECT content_session_id, platform_source FROM {view}"  # noqa: S608
            ).fetchall()
            assert dict(rows) == {sid: spec[1] for sid, spec in SESSIONS.items()}, view
    finally:
        con.close()
