"""``workbench corpus build --team``: a corpus of your observations and your colleagues'.

Real parts: the session's PostgreSQL as the DuckLake catalog, two authors publishing with
``workbench publish``, ana's real service (the CLI builds corpora through it), real CLI runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, base_env, free_port
from tests.team_harness import Lake, Machine, forget, init, machine, seed

pytestmark = pytest.mark.slow

T = 1_780_000_000_000


@pytest.fixture(scope="module")
def ana_service(
    postgres_cluster: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Machine, Service]]:
    """ana's service after ana and bob published (bob forgot a row first).

    One for the module (issue 23): the tests only read the lake, each builds a corpus of its
    own name, and two publishes and a start-up cost more than any of them. Full text only, as
    under ``_clean_env``, which a module fixture precedes.
    """
    tmp_path = tmp_path_factory.mktemp("team-corpus")
    team_lake = Lake(postgres_cluster, postgres_cluster.new_database(), tmp_path / "lake")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("WORKBENCH_EMBEDDER", "none")  # copied into each machine's environment
        yield from _ana_service(team_lake, tmp_path)


def _ana_service(team_lake: Lake, tmp_path: Path) -> Iterator[tuple[Machine, Service]]:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", ["cache layer"], at_ms=T)
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    bob = machine(tmp_path, "bob")
    ids = seed(bob.data_dir, "api", "b1", ["cache eviction", "cache warmup"], at_ms=T + 5_000)
    seed(bob.data_dir, "web", "b2", ["web thing"], at_ms=T + 6_000)
    init(bob, team_lake, "api", "web", author="bob")
    forget(bob.data_dir, ids[1])
    bob.publish_json()
    port = free_port()
    service = Service(data_dir=ana.data_dir, port=port, env=base_env(ana.data_dir, port)).start()
    ana.env = service.env
    try:
        yield ana, service
    finally:
        service.stop()


def _corpus_file(ana: Machine, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (ana.data_dir / "corpora" / f"{name}.corpus.json").read_text()
    )
    return data


def test_corpus_build_team_adds_colleagues_rows_with_their_author(ana_service: Any) -> None:
    ana, _ = ana_service

    out = ana.run("corpus", "build", "api-team", "--project", "api", "--team", "--json")

    assert out.returncode == 0, out.stderr
    built = json.loads(out.stdout)
    assert built["stats"]["observation_count"] == 2
    kept = _corpus_file(ana, "api-team")["observations"]
    # ana's own row once (local wins), bob's live api row; bob's forgotten one never
    assert [(o.get("author"), o["title"]) for o in kept] == [
        (None, "cache layer"),
        ("bob", "cache eviction"),
    ]
    from workbench.knowledge import corpus, render
    from workbench.settings import load_settings

    loaded = corpus.load(load_settings(ana.data_dir), "api-team")
    assert "- Author: bob (a colleague's; not citable by id)" in render.corpus_text(loaded)
    assert loaded.ids() == {1}  # only ana's own id is citable


def test_corpus_build_without_team_stays_local(ana_service: Any) -> None:
    ana, _ = ana_service

    out = ana.run("corpus", "build", "api-mine", "--project", "api", "--json")

    assert out.returncode == 0, out.stderr
    kept = _corpus_file(ana, "api-mine")["observations"]
    assert [o["title"] for o in kept] == ["cache layer"]


def test_corpus_build_team_with_a_query(ana_service: Any) -> None:
    ana, _ = ana_service

    out = ana.run("corpus", "build", "evict", "--query", "eviction", "--team", "--json")

    assert out.returncode == 0, out.stderr
    kept = _corpus_file(ana, "evict")["observations"]
    assert [(o["author"], o["title"]) for o in kept] == [("bob", "cache eviction")]


def test_team_in_a_corpus_filter_must_be_a_boolean(ana_service: Any) -> None:
    from tests.conftest import http_json

    _, service = ana_service

    status, body = http_json(
        "POST", f"{service.url}/api/corpus", {"name": "x", "team": "yes"}, timeout=60
    )

    assert status == 400
    assert "team must be true or false" in body["message"]
