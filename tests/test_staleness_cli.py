"""``workbench stale`` and DuckDB's ``staleness`` view (issue 22, item 5), for real.

A real git repository, a real service, the real CLI as a subprocess: the stale list as a
table for people and as JSON, scoped by ``--project``, with ``--commits`` naming the commit
that changed the file; the verdicts recorded for ``workbench sql``'s read-only views; and a
precise 422 for a bad request.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Service, run_workbench
from tests.test_staleness import (
    stale_and_fresh,
)
from workbench.locate import project_identity

pytestmark = pytest.mark.slow


def test_workbench_stale_lists_the_stale_ones_as_json_and_as_a_table(
    tmp_path: Path, service: Service
) -> None:
    repo, stale, fresh = stale_and_fresh(tmp_path, service)
    project = project_identity(str(repo)).name
    done = run_workbench(service.env, "stale", "--json", "--commits")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert (reply["checked"], reply["stale"]) == (2, 1)
    (item,) = reply["items"]
    assert item["id"] == stale
    assert item["changedFiles"] == ["lib.py"]
    assert item["project"] == project
    assert item["repoRoot"] == str(repo)
    assert [c.split(" ", 1)[1] for c in item["commits"]] == ["lib now says two"]

    other = run_workbench(service.env, "stale", "--json", "--project", "no-such-project")
    assert json.loads(other.stdout) == {"checked": 0, "stale": 0, "items": []}

    table = run_workbench(service.env, "stale", "--project", project)
    assert table.returncode == 0, table.stderr
    assert "1 stale of 2 observations with evidence" in table.stdout
    assert f"#{stale}" in table.stdout
    assert "lib.py" in table.stdout
    assert f"#{fresh}" not in table.stdout


def test_the_staleness_view_shows_the_last_check(tmp_path: Path, service: Service) -> None:
    _, stale, fresh = stale_and_fresh(tmp_path, service)
    assert run_workbench(service.env, "stale", "--json").returncode == 0
    done = run_workbench(
        service.env,
        "sql",
        "SELECT observation_id, stale, changed_files FROM staleness ORDER BY observation_id",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows == [
        {"observation_id": stale, "stale": True, "changed_files": ["lib.py"]},
        {"observation_id": fresh, "stale": False, "changed_files": []},
    ]
    evidence = run_workbench(
        service.env, "sql", "SELECT count(*) AS n, count(git_commit) AS c FROM evidence", "--json"
    )
    assert json.loads(evidence.stdout) == [{"n": 2, "c": 2}]


def test_a_bad_stale_request_is_a_precise_422(service: Service) -> None:
    for body, field in (({"limit": 0}, "limit"), ({"projects": "x"}, "projects")):
        status, reply = service.post("/api/stale", body)
        assert status == 422, reply
        assert field in json.dumps(reply)


def test_search_timeline_and_show_mark_stale_ones_with_and_without_the_service(
    tmp_path: Path, service: Service
) -> None:
    """Through the service, and read-only from the store when none runs (the CLI's fallback)."""
    repo, stale, fresh = stale_and_fresh(tmp_path, service)
    project = project_identity(str(repo)).name
    for running in (True, False):
        if not running:
            service.stop()
        found = run_workbench(service.env, "search", "--project", project, "--json")
        assert found.returncode == 0, found.stderr
        flags = {
            h["id"]: (h["stale"], h["stale_files"])
            for h in json.loads(found.stdout)["observations"]
        }
        assert flags == {stale: (True, ["lib.py"]), fresh: (False, [])}, running
        wide = {**service.env, "COLUMNS": "300"}  # rich folds long cells at 80 columns
        table = run_workbench(wide, "search", "--project", project)
        assert "(stale: lib.py changed since)" in table.stdout, (running, table.stdout)
        around = run_workbench(service.env, "timeline", str(stale), "--json")
        items = {i["id"]: i["stale"] for i in json.loads(around.stdout)["items"]}
        assert items[stale] is True
        assert items[fresh] is False
        shown = run_workbench(service.env, "show", str(stale), str(fresh), "--json")
        assert shown.returncode == 0, shown.stderr
        assert {o["id"]: o["stale"] for o in json.loads(shown.stdout)} == {
            stale: True,
            fresh: False,
        }
        text = run_workbench(wide, "show", str(stale))
        assert "lib.py changed since" in text.stdout, running
