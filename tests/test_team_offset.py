"""``--offset`` / ``offset=`` with the team: pages of the *fused* (local + team) list.

Before, the offset moved the local hits only and every page started the team's list again,
so page 2 repeated page 1's colleagues. Real parts: the session's PostgreSQL as the catalog,
ana and bob publishing with ``workbench publish``, ``workbench search`` as a subprocess, and
ana's real service for the HTTP pages.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, base_env, free_port, http_json
from tests.team_harness import Machine, init, machine, seed

pytestmark = pytest.mark.slow


def _team(team_lake: Any, tmp_path: Path, mine: int, theirs: int) -> Machine:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", [f"cache note {i}" for i in range(mine)])
    seed(ana.data_dir, "web", "a2", ["kept local"])
    init(ana, team_lake, "api", author="ana")
    bob = machine(tmp_path, "bob")
    seed(bob.data_dir, "api", "b1", [f"cache tip {i}" for i in range(theirs)])
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()
    return ana


def _keys(hits: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(h["author"], h["id"]) for h in hits]


def _cli_page(ana: Machine, *args: str) -> list[tuple[str, int]]:
    out = ana.run("search", "--team", "--json", "cache", *args)
    assert out.returncode == 0, out.stderr + out.stdout
    return _keys(json.loads(out.stdout)["observations"])


def test_cli_pages_walk_the_fused_list(team_lake: Any, tmp_path: Path) -> None:
    ana = _team(team_lake, tmp_path, mine=4, theirs=4)

    whole = _cli_page(ana, "--limit", "20")
    pages = [_cli_page(ana, "--limit", "3", "--offset", str(o)) for o in (0, 3, 6)]

    assert len(whole) == 8
    assert {a for a, _ in whole} == {"me", "bob"}
    assert [k for page in pages for k in page] == whole


def test_http_pages_past_one_local_page_have_no_gap_and_no_repeat(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = _team(team_lake, tmp_path, mine=104, theirs=6)
    port = free_port()
    service = Service(data_dir=ana.data_dir, port=port, env=base_env(ana.data_dir, port)).start()
    try:
        pages = []
        for offset in range(0, 120, 10):
            query = urllib.parse.urlencode(
                {"query": "cache", "team": "true", "format": "json", "limit": 10, "offset": offset}
            )
            status, body = http_json("GET", f"{service.url}/api/search?{query}", timeout=60)
            assert status == 200, body
            assert body["offset"] == offset
            pages.append(_keys(body["observations"]))
    finally:
        service.stop()

    walked = [k for page in pages for k in page]
    assert len(walked) == len(set(walked)) == 110
    assert sum(1 for a, _ in walked if a == "bob") == 6
