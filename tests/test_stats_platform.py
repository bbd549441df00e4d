"""Token economics by agent platform: ``/api/stats/economics?by=platform_source`` and the CLI."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import Service, seeded_service
from tests.relevance_set import OBSERVATIONS, SESSIONS, seed
from workbench.cli.main import app

# The relevance set holds Claude Code sessions and two Cursor ones (values a later adapter
# will send); every observation takes its session's platform.
EXPECTED = Counter(SESSIONS[o.session][1] for o in OBSERVATIONS)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("stats-platform") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        yield service


def test_economics_by_platform_over_http(seeded: Service) -> None:
    status, body = seeded.get("/api/stats/economics?by=platform_source")
    assert status == 200, body
    counts = {row["platform_source"]: row["observations"] for row in body["items"]}
    assert counts == dict(EXPECTED)
    assert body["summary"]["observations"] == sum(EXPECTED.values())


def test_economics_by_platform_from_the_cli(seeded: Service) -> None:
    env = {"WORKBENCH_DATA_DIR": str(seeded.data_dir), "WORKBENCH_PORT": str(seeded.port)}
    args = ["stats", "economics", "--by", "platform_source", "--json"]
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["items"]
    assert {row["platform_source"]: row["observations"] for row in items} == dict(EXPECTED)


def test_an_unknown_grouping_is_a_422_naming_the_choices(seeded: Service) -> None:
    status, body = seeded.get("/api/stats/economics?by=platform")
    assert status == 422, body
    assert "platform_source" in json.dumps(body)
