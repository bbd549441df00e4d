"""``team_context``: colleagues' memories of the project in the SessionStart block, from the lake.

Real parts: the session's PostgreSQL as the catalog, a colleague (bob) publishing with the
real ``workbench publish``, the real service (``make_service``) answering
``/api/context/inject`` for ana. An unreachable lake is a closed port; a lake that never
answers is a real listening socket that accepts nothing (libpq waits on it).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port
from tests.team_harness import forget, init, machine, seed
from workbench.recall import render

pytestmark = pytest.mark.slow

HEADING = "## From colleagues"


def context(svc: Any) -> str:
    status, body = svc.get("/api/context/inject?project=api")
    assert status == 200, body
    assert isinstance(body, str)
    return body


def team_env(lake: Any, **extra: str) -> dict[str, str]:
    return {
        "WORKBENCH_TEAM_CATALOG": lake.dsn,
        "WORKBENCH_TEAM_DATA": str(lake.data),
        "WORKBENCH_TEAM_PROJECTS": "api",
        "WORKBENCH_TEAM_AUTHOR": "ana",
        # A reachable lake must answer: the default 2 s budget is for a user's SessionStart,
        # and a loaded CI box can spend longer than that on the first DuckLake attach (a test
        # once saw the team part skipped). The budget's own behaviour is tested below.
        "WORKBENCH_TEAM_CONTEXT_TIMEOUT_S": "30",
        **extra,
    }


@pytest.fixture
def bob_published(team_lake: Any, tmp_path: Path) -> Any:
    """bob's lake rows for project api: two live, one forgotten, one titled like ana's."""
    bob = machine(tmp_path, "bob")
    ids = seed(
        bob.data_dir,
        "api",
        "bob-1",
        ["bob found the cache bug", "bob's retry policy", "bob's secret plan", "shared title"],
        at_ms=1_790_000_000_000,
    )
    seed(bob.data_dir, "web", "bob-2", ["bob's web note"], at_ms=1_790_000_000_000)
    init(bob, team_lake, "api", "web", author="bob")
    bob.publish_json()
    forget(bob.data_dir, ids[2])
    assert bob.publish_json()["tombstoned"] == 1
    return team_lake


def seed_ana(data_dir: Path) -> None:
    seed(data_dir, "api", "ana-1", ["ana's own note", "Shared  TITLE"], at_ms=1_791_000_000_000)


def test_colleagues_rows_follow_the_local_ones_labelled_and_fenced(
    bob_published: Any, make_service: Any, data_dir: Path
) -> None:
    seed_ana(data_dir)
    svc = make_service(**team_env(bob_published, WORKBENCH_TEAM_CONTEXT="1"))

    text = context(svc)

    assert text.startswith("<")  # one fence around it all
    assert text.rstrip().endswith(">")
    assert render.UNTRUSTED in text
    local_at = text.index("ana's own note")
    team_at = text.index(HEADING)
    assert local_at < team_at
    team_part = text[team_at:].split("\n\n")[0]
    assert "bob found the cache bug — by bob" in team_part
    assert "bob's retry policy" in team_part
    assert "secret plan" not in text  # tombstoned in the lake: never shown
    assert "web note" not in text  # another project
    assert "shared title" not in team_part.lower()  # local wins on a duplicate
    assert len(re.findall(r"(?i)shared\s+title", text)) == 1


def test_off_by_default(bob_published: Any, make_service: Any, data_dir: Path) -> None:
    seed_ana(data_dir)
    svc = make_service(**team_env(bob_published))

    text = context(svc)

    assert HEADING not in text
    assert "bob" not in text


def test_team_rows_only_fill_the_slots_the_local_rows_leave(
    bob_published: Any, make_service: Any, data_dir: Path
) -> None:
    seed_ana(data_dir)  # two local rows
    svc = make_service(
        **team_env(bob_published, WORKBENCH_TEAM_CONTEXT="1", WORKBENCH_CONTEXT_OBSERVATIONS="3")
    )

    text = context(svc)

    team_part = text[text.index(HEADING) :].split("\n\n")[0]
    assert "newest 1," in team_part
    assert team_part.count("— by bob") == 1


def test_own_rows_in_the_lake_are_not_shown_twice(
    team_lake: Any, make_service: Any, data_dir: Path, tmp_path: Path
) -> None:
    seed_ana(data_dir)
    ana = machine(tmp_path, "ana-cli")
    ana.data_dir = data_dir
    init(ana, team_lake, "api", author="ana")
    assert ana.publish_json()["added"]["observations"] == 2
    svc = make_service(**team_env(team_lake, WORKBENCH_TEAM_CONTEXT="1"))

    text = context(svc)

    assert HEADING not in text
    assert text.count("ana's own note") == 1


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) and never says a word."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


@pytest.mark.parametrize("kind", ["closed port", "silent server"])
def test_an_unreachable_lake_serves_the_local_context_unchanged(
    kind: str, make_service: Any, data_dir: Path, tmp_path: Path, silent_server: int
) -> None:
    seed_ana(data_dir)
    port = free_port() if kind == "closed port" else silent_server
    plain = make_service()
    expected = context(plain)
    plain.stop()
    svc = make_service(
        WORKBENCH_TEAM_CATALOG=f"postgres://postgres@127.0.0.1:{port}/lake",
        WORKBENCH_TEAM_DATA=str(tmp_path / "lake"),
        WORKBENCH_TEAM_CONTEXT="1",
        WORKBENCH_TEAM_CONTEXT_TIMEOUT_S="0.5",
    )

    assert context(svc) == expected
    assert "team context skipped" in svc.log_path.read_text()
