"""``workbench.sources``: one read interface over the local store and the team lake (issue 23,
item 1).

- The search and timeline routes and ``workbench search | timeline`` ask a source and send
  what it returns: no ``if team:`` branch is left in them but the one place each picks its
  source (``source_for``).
- What a corpus, ``stats``/``sql --team``, a report and the SessionStart block select comes
  from a source too (``sources.select``, ``sources.tables``): no ``if team:`` branch in them.
- The local source's typed reply IS the wire: over the same store, what it returns dumps to
  exactly what ``/api/search`` and ``/api/timeline`` send (JSON and text).

Real parts: the relevance set in a real SQLite store, served by a real service on a loopback
port; the local source reads the same file read-only in this process.
"""

from __future__ import annotations

import ast
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import conftest
from tests.conftest import Service
from tests.relevance_set import Seeded
from tests.test_team_refs import team, team_service

ON_A_TEAM_LAKE = (team, team_service)  # test_team_refs' fixtures: ana and bob on a real lake

ROOT = Path(__file__).resolve().parents[1]
READ_PATHS = (
    "service/routes/search.py",
    "workbench/cli/recall.py",
    "workbench/mcp_server/recall_tools.py",
)
GET_PATHS = (
    "workbench/cli/recall.py",
    "workbench/mcp_server/recall_tools.py",
    "service/routes/observations.py",
    "service/routes/team.py",
)
# What asks for rows to select (a corpus, a report, the SQL sandbox, the SessionStart block).
SELECT_PATHS = (
    "workbench/cli/analytics.py",
    "workbench/knowledge/corpus.py",
    "workbench/knowledge/reports.py",
    "workbench/recall/context.py",
    "service/routes/context.py",
)
CHOOSERS = {"source_for"}  # the one function per front end that picks local or local + team


def team_branches(path: Path, names: tuple[str, ...] = ("team",)) -> list[str]:
    """Each ``if``/conditional expression on ``names`` (names or attributes; ``team`` by
    default) in ``path`` outside a source chooser, as ``file:line in function``."""
    found: list[str] = []

    def on_team(test: ast.expr) -> bool:
        return any(
            (isinstance(n, ast.Name) and n.id in names)
            or (isinstance(n, ast.Attribute) and n.attr in names)
            for n in ast.walk(test)
        )

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.If | ast.IfExp) and on_team(node.test):
            if function not in CHOOSERS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} in {function}")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(path.read_text("utf-8")), "<module>")
    return found


def test_read_paths_ask_a_source_instead_of_branching_on_team() -> None:
    branches = [b for p in READ_PATHS for b in team_branches(ROOT / p)]

    assert branches == []


def test_corpora_reports_analytics_and_context_select_from_a_source_without_branching_on_team() -> (
    None
):
    """The ``select`` callers: a corpus, ``stats``/``sql --team``, a report's groupings and the
    SessionStart block each branched on ``team`` (8 branches, counted with ``ast``)."""
    branches = [b for p in SELECT_PATHS for b in team_branches(ROOT / p)]

    assert branches == []


def test_the_timeline_scopes_its_project_through_the_one_filter_compiler() -> None:
    """``recall/timeline.py`` wrote its own ``project = ?``; it now asks ``SearchFilters``.

    Left hand-written on purpose, each for its layer: ``recall/context.py`` is stdlib-only
    (the cold SessionStart hook imports it; the compiler needs pydantic), ``store/transfer.py``
    and ``staleness/report.py`` sit below ``recall/`` (``tests/test_layers.py``), and
    ``team/local_rows.py`` selects publish watermarks, not a read filter."""
    text = (ROOT / "workbench/recall/timeline.py").read_text("utf-8")

    assert "project = ?" not in text
    assert "table_sql(" in text


def test_show_and_the_observation_routes_ask_a_source_instead_of_splitting_ids() -> None:
    """``workbench show`` and the MCP ``get_observations`` split local ids from team refs with
    ``if team_refs``."""
    names = ("team", "team_refs")
    branches = [b for p in GET_PATHS for b in team_branches(ROOT / p, names)]

    assert branches == []


@pytest.fixture(scope="module")
def seeded_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Seeded]]:
    with conftest.relevance_set_service(tmp_path_factory.mktemp("sources") / "data") as found:
        yield found


@pytest.fixture
def local(seeded_service: tuple[Service, Seeded]) -> Iterator[Any]:
    """The local source over the service's store, opened read-only here (no vector ranker,
    so the cases run full text: each side would say why hybrid is off in its own words)."""
    from workbench.recall.search import SearchEngine
    from workbench.settings import load_settings
    from workbench.sources.local import LocalSource
    from workbench.store.database import Store

    svc = seeded_service[0]
    settings = load_settings(svc.data_dir)
    with Store(settings.db_path, readonly=True) as store:
        yield LocalSource(SearchEngine(store, settings))


def _get(svc: Service, path: str, params: dict[str, Any]) -> Any:
    status, body = svc.get(f"{path}?{urllib.parse.urlencode(params)}")
    assert status == 200, body
    return body


def test_a_search_validated_at_the_edge_is_not_validated_again_by_the_engine(
    local: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SearchQuery`` checks kinds, mode, order, limit and offset once; the local source
    hands it to the engine, which used to check the same five again on every search. The
    engine's checkers are counted (they still run: the real functions answer)."""
    from workbench.recall import search
    from workbench.recall.search_query import SearchQuery

    ask = SearchQuery.parse(
        {"query": "refund", "kinds": "observations", "mode": "fts", "limit": "3", "offset": "1"}
    )
    calls: list[str] = []
    for name in ("parse_types", "_choice"):
        real = getattr(search, name)
        monkeypatch.setattr(
            search, name, lambda *a, _r=real, _n=name, **k: calls.append(_n) or _r(*a, **k)
        )

    found = local.search(ask)

    assert found.observations  # a real search ran
    assert calls == []


@pytest.mark.parametrize(
    "params",
    [
        {"query": "why were refunds charged twice", "mode": "fts"},
        {"query": "refund", "types": "bugfix,decision", "limit": "3", "offset": "1", "mode": "fts"},
        {"query": "dark mode", "kinds": "sessions,prompts", "mode": "fts"},
        {"project": "payments-api", "order_by": "date_desc"},
    ],
)
def test_the_local_source_returns_what_the_search_route_sends(
    seeded_service: tuple[Service, Seeded], local: Any, params: dict[str, str]
) -> None:
    from workbench.recall.search_query import SearchQuery

    svc = seeded_service[0]
    ask = SearchQuery.parse(params)

    assert local.search(ask).wire() == _get(svc, "/api/search", {**params, "format": "json"})
    assert local.search(ask, count_totals=False).text() == _get(
        svc, "/api/search", {**params, "format": "text"}
    )


def test_the_local_source_returns_what_the_timeline_route_sends(
    seeded_service: tuple[Service, Seeded], local: Any
) -> None:
    from workbench.sources.source import TimelineAsk

    svc, labels = seeded_service
    anchor = labels.ids["refund-idempotency"]
    reply = local.timeline(TimelineAsk(anchor=anchor, depth_before=2, depth_after=3))
    params = {"anchor": anchor, "depth_before": 2, "depth_after": 3}

    assert reply.wire() == _get(svc, "/api/timeline", params)
    assert reply.text() == _get(svc, "/api/timeline", {**params, "format": "text"})


def test_the_search_route_documents_the_merged_reply_of_team_true(tmp_path: Path) -> None:
    """``/api/search?team=true`` answers a ``MergedSearchReply``: the OpenAPI 200 says so,
    with its team fields, next to the local ``SearchReply``."""
    from service.app import create_app
    from workbench.settings import load_settings

    spec = create_app(load_settings(tmp_path), pid_lock=False).openapi()
    reply = spec["paths"]["/api/search"]["get"]["responses"]["200"]
    answer = reply["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    schemas = spec["components"]["schemas"]
    named = {s["$ref"].rsplit("/", 1)[1] for s in schemas[answer]["anyOf"]}

    assert named == {"SearchReply", "MergedSearchReply"}
    assert {"teamSnapshot", "teamResults", "offset", "teamStale"} <= set(
        schemas["MergedSearchReply"]["properties"]
    )
    assert "text/plain" in reply["content"]


def test_the_local_source_gets_what_the_observation_routes_send(
    seeded_service: tuple[Service, Seeded], local: Any
) -> None:
    from workbench.sources.source import GetAsk

    svc, labels = seeded_service
    first, second = labels.ids["refund-idempotency"], labels.ids["dark-mode"]
    status, batch = svc.post("/api/observations/batch", {"ids": [second, first, 99_999_999]})
    got = local.get(GetAsk(ids=(second, first, 99_999_999)))

    assert status == 200, batch
    assert [o.model_dump() for o in got.mine] == batch
    assert got.missing == ["99999999"]
    assert got.wire() == batch
    one = local.get(GetAsk(ids=(first,))).mine[0].model_dump()
    assert one == _get(svc, f"/api/observation/{first}", {})


@pytest.mark.slow
@pytest.mark.usefixtures("team_service")
def test_the_team_source_gets_what_the_route_sends_and_show_prints_it_as_before(
    request: pytest.FixtureRequest,
) -> None:
    """A real team lake (PostgreSQL catalog, ana and bob published): the team source's ``get``
    is the team route's body, and ``show --json`` prints the mirror's column order, as before."""
    from workbench.settings import load_settings
    from workbench.team.source import TeamSource

    ana, service, bob_id = request.getfixturevalue("team_service")
    ref = f"team:bob:{bob_id}"
    status, route = service.get(f"/api/team/observation/{urllib.parse.quote(ref)}")
    theirs, missing = TeamSource(load_settings(ana.data_dir)).get([ref, "team:carol:3"])
    shown = ana.run("show", ref, "--json")

    assert status == 200, route
    assert [o.model_dump(by_alias=True) for o in theirs] == route["observations"]
    assert missing == ["team:carol:3"]
    assert shown.returncode == 0, shown.stderr
    printed = json.loads(shown.stdout)
    assert printed == route["observations"]
    assert list(printed[0]) == [
        *("author", "content_session_id", "project", "platform_source", "prompt_number"),
        *("type", "title", "subtitle", "narrative", "facts", "concepts", "files_read"),
        *("files_modified", "discovery_tokens", "created_at", "created_at_epoch"),
        *("generated_by", "id", "ref", "teamSnapshot"),
    ]
