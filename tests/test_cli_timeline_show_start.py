"""``workbench timeline`` and ``show`` as real processes: what they import, and what they print.

Issue 21: after ``search`` got its standard-library path, ``timeline`` and ``show`` still took
~1.2 s as processes on a loaded 2-core box (~0.5 s of CPU), nearly all of it Typer, pydantic,
pydantic-settings and httpx imported before one request. Their common forms (the service up,
no ``--team``) now go through the standard library; each case here runs the command as a
fresh process and compares it, byte for byte, with the full Typer path (``CliRunner`` on
``app``) against the same real service and store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import conftest
from tests.conftest import Service
from tests.relevance_set import Seeded
from tests.test_cli_search_start import answers_as_full_path, full_path, heavy, process


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Seeded]]:
    with conftest.relevance_set_service(tmp_path_factory.mktemp("cli-recall") / "data") as found:
        yield found


def same_as_full_path(service: Service, tmp_path: Path, *args: str) -> str:
    """Run ``args`` both ways; assert the fresh process imported nothing heavy and printed
    exactly what the full path prints (stdout, stderr, exit code); return its stdout."""
    done, modules = process(service, tmp_path, *args)
    assert heavy(modules) == [], (args, done.stderr)
    assert "rich" not in {m.split(".")[0] for m in modules}  # plain text: cli.plain_text
    code, stdout, stderr = full_path(service, *args)
    assert (done.returncode, done.stdout) == (code, stdout), args
    assert done.stderr.strip() == stderr.strip(), args
    return done.stdout


def test_timeline_by_id_is_the_full_paths_table(
    svc: tuple[Service, Seeded], tmp_path: Path
) -> None:
    service, labels = svc
    anchor = labels.ids["refund-idempotency"]
    out = same_as_full_path(service, tmp_path, "timeline", str(anchor))
    assert f"timeline around #{anchor}" in out
    same_as_full_path(service, tmp_path, "timeline", str(anchor), "--before=1", "--after", "2")


def test_timeline_by_query_and_project_as_json(svc: tuple[Service, Seeded], tmp_path: Path) -> None:
    service, labels = svc
    args = ("timeline", "-q", "docker image too large", "--project", "infra", "--json")
    data = json.loads(same_as_full_path(service, tmp_path, *args))
    assert data["anchor"]["id"] == labels.ids["docker-slim"]
    table = same_as_full_path(service, tmp_path, *args[:-1])
    assert "(best match for 'docker image too large')" in table


def test_timeline_on_a_summary_and_a_moment(svc: tuple[Service, Seeded], tmp_path: Path) -> None:
    service, labels = svc
    summary = labels.summaries["pay-2"]
    assert f"timeline around #S{summary}" in same_as_full_path(
        service, tmp_path, "timeline", f"S{summary}"
    )
    same_as_full_path(service, tmp_path, "timeline", "2026-11-10T12:00:00Z", "--after", "0")


def test_show_prints_the_full_paths_observations(
    svc: tuple[Service, Seeded], tmp_path: Path
) -> None:
    service, labels = svc
    a, b = labels.ids["refund-idempotency"], labels.ids["docker-slim"]
    out = same_as_full_path(service, tmp_path, "show", str(a), f"#{b}")
    assert f"#{a}" in out
    assert f"#{b}" in out
    data = json.loads(same_as_full_path(service, tmp_path, "show", f"{a},{b}", "--json"))
    assert sorted(o["id"] for o in data) == sorted([a, b])


def test_show_of_a_missing_id_says_so_as_before(
    svc: tuple[Service, Seeded], tmp_path: Path
) -> None:
    service, labels = svc
    a = labels.ids["refund-idempotency"]
    same_as_full_path(service, tmp_path, "show", str(a), "999999")
    same_as_full_path(service, tmp_path, "show", "999999", "--json")


@pytest.mark.parametrize(
    "args",
    [
        ("timeline",),  # no anchor and no query: the service refuses, the full path says why
        ("timeline", "999999"),  # an anchor that is not there
        ("timeline", "1", "--before", "51"),  # Typer's own bound
        ("timeline", "1", "--team"),  # the team lake is not set up: the full path says so
        ("show",),  # Typer's missing-argument error
        ("show", "abc"),  # not an id: the full path names the fix
        ("show", "team:ana:3"),  # a team ref: the full path checks the lake
        ("show", "1", "--team"),  # no such option
    ],
)
def test_everything_else_answers_as_the_full_path(
    svc: tuple[Service, Seeded], tmp_path: Path, args: tuple[str, ...]
) -> None:
    answers_as_full_path(svc[0], tmp_path, *args)


@pytest.mark.parametrize("command", ["timeline", "show"])
def test_service_down_reads_the_store_as_before(
    svc: tuple[Service, Seeded], tmp_path: Path, command: str
) -> None:
    service, labels = svc
    args = (command, str(labels.ids["refund-idempotency"]), "--json")
    done, _ = process(service, tmp_path, *args, up=False)
    code, stdout, stderr = full_path(service, *args, up=False)
    assert (done.returncode, done.stdout) == (code, stdout) == (0, stdout)
    assert "not running" in done.stderr
    # each side was given a port of its own where nothing answers
    assert re.sub(r":\d+;", ":PORT;", done.stderr.strip()) == re.sub(
        r":\d+;", ":PORT;", stderr.strip()
    )
