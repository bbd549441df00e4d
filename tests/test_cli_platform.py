"""``workbench search --platform``: the same filter through the service and without it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import Service, free_port, seeded_service
from tests.relevance_set import SESSIONS, seed
from workbench.cli.main import app
from workbench.store.database import Store


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("cli-platform") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed) as service:
        yield service


def search(svc: Service, *args: str, up: bool) -> dict:
    port = svc.port if up else free_port()
    env = {"WORKBENCH_DATA_DIR": str(svc.data_dir), "WORKBENCH_PORT": str(port)}
    result = CliRunner().invoke(app, ["search", *args, "--json"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _observation_sessions(svc: Service, ids: list[int]) -> set[str]:
    with Store(svc.data_dir / "workbench.db", readonly=True) as ro:
        marks = ",".join("?" * len(ids))
        sql = f"SELECT content_session_id FROM observations WHERE id IN ({marks})"
        return {r[0] for r in ro.conn.execute(sql, ids)}


@pytest.mark.parametrize("up", [True, False], ids=["service", "local"])
def test_search_platform_keeps_only_that_platforms_sessions(seeded: Service, up: bool) -> None:
    cursor = {sid for sid, (_, platform, _) in SESSIONS.items() if platform == "cursor"}
    every = search(
        seeded, "--since", "2026-11-01", "--type", "observations", "--limit", "100", up=up
    )
    only = search(seeded, "--type", "observations", "--limit", "100", "--platform", "cursor", up=up)
    ids = [hit["id"] for hit in only["observations"]]
    assert ids
    assert _observation_sessions(seeded, ids) <= cursor
    assert len(ids) < len(every["observations"])
