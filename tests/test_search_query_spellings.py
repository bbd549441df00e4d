"""One spelling per search field at every edge (HTTP, CLI, MCP), the old ones for one release.

Real parts: the seeded relevance store behind a real service, the CLI in-process against it,
and the MCP server as a real stdio subprocess.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from typer.testing import CliRunner

from tests.conftest import ROOT, Service, seeded_service
from tests.relevance_set import seed
from tests.test_mcp import params, run_session, text_of
from workbench.cli.main import app
from workbench.cli.query_options import LEGACY_OPTIONS, option_of
from workbench.knowledge.corpus_filter import CorpusFilter
from workbench.recall.search_query import LEGACY_NAMES, SearchQuery

FILTER = {"types": "bugfix,decision", "since": "2026-11-01", "order_by": "date_desc", "limit": 50}
OLD_FILTER = {"obs_type": "bugfix,decision", "dateStart": "2026-11-01", "orderBy": "date_desc"}


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("spellings") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        yield service


def http_search(svc: Service, query: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    """``GET /api/search?format=json`` with ``query``: status, headers (lowercase names, every
    ``warning`` joined), body."""
    url = f"{svc.url}/api/search?{urllib.parse.urlencode({**query, 'format': 'json'})}"
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            warnings = reply.headers.get_all("Warning") or []
            headers = {k.lower(): v for k, v in reply.headers.items()}
            return reply.status, {**headers, "warning": "\n".join(warnings)}, json.load(reply)
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, json.load(err)


def ids(data: dict[str, Any]) -> list[int]:
    return [hit["id"] for hit in data["observations"]]


def cli(svc: Service, *args: str) -> Any:
    env = {"WORKBENCH_DATA_DIR": str(svc.data_dir), "WORKBENCH_PORT": str(svc.port)}
    return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)


# ----- HTTP ------------------------------------------------------------------------------------


def test_http_old_spellings_give_the_same_hits_with_deprecation_headers(svc: Service) -> None:
    status, headers, new = http_search(svc, FILTER)
    assert status == 200, new
    assert "deprecation" not in headers
    assert ids(new)
    status, headers, old = http_search(svc, {**OLD_FILTER, "limit": 50})
    assert status == 200, old
    assert ids(old) == ids(new)
    assert headers["deprecation"] == "true"
    for name in OLD_FILTER:
        assert f"{name} is deprecated, use {LEGACY_NAMES[name]}" in headers["warning"]


@pytest.mark.parametrize(("old", "new"), sorted(LEGACY_NAMES.items()))
def test_http_each_old_spelling_still_filters(svc: Service, old: str, new: str) -> None:
    value = {
        "types": "bugfix",
        "kinds": "observations",
        "since": "2026-11-01",
        "until": "2026-12-31",
        "platform_source": "cursor",
        "order_by": "date_asc",
    }[new]
    base = {"limit": 100, "mode": "fts", "query": "the"}
    _, _, want = http_search(svc, {**base, new: value})
    status, headers, got = http_search(svc, {**base, old: value})
    assert status == 200, got
    assert ids(got) == ids(want)
    assert f"{old} is deprecated, use {new}" in headers["warning"]


def test_http_both_spellings_disagreeing_is_a_422_naming_both(svc: Service) -> None:
    status, _, body = http_search(svc, {"obs_type": "bugfix", "types": "feature"})
    assert status == 422, body
    assert "obs_type='bugfix'" in body["message"]
    assert "types='feature'" in body["message"]


def test_timeline_old_depth_spellings_work_with_headers_and_must_agree(svc: Service) -> None:
    def timeline(query: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        url = f"{svc.url}/api/timeline?{urllib.parse.urlencode({'anchor': '2026-11-15', **query})}"
        try:
            with urllib.request.urlopen(url, timeout=30) as reply:
                warnings = "\n".join(reply.headers.get_all("Warning") or [])
                return reply.status, {**reply.headers, "warning": warnings}, json.load(reply)
        except urllib.error.HTTPError as err:
            return err.code, {}, json.load(err)

    status, headers, new = timeline({"depth_before": 2, "depth_after": 1})
    assert status == 200, new
    assert "deprecation" not in {k.lower() for k in headers}
    status, headers, old = timeline({"depthBefore": 2, "depthAfter": 1})
    assert status == 200, old
    assert old == new
    assert "depthBefore is deprecated, use depth_before" in headers["warning"]
    assert "depthAfter is deprecated, use depth_after" in headers["warning"]
    status, _, body = timeline({"depthBefore": 2, "depth_before": 3})
    assert status == 422, body
    assert "depthBefore=2 and depth_before=3 disagree" in body["message"]


def test_openapi_documents_each_search_field_once(svc: Service) -> None:
    _, spec = svc.get("/openapi.json")
    names = [p["name"] for p in spec["paths"]["/api/search"]["get"]["parameters"]]
    assert sorted(names) == sorted([*SearchQuery.model_fields, "format"])
    assert not set(names) & set(LEGACY_NAMES)


def test_corpus_build_old_spellings_work_with_deprecation_headers(svc: Service) -> None:
    body = json.dumps({"name": "old-way", "dateStart": "2026-11-01", "platformSource": "cursor"})
    request = urllib.request.Request(
        f"{svc.url}/api/corpus", body.encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        built = json.load(reply)
        assert reply.headers["deprecation"] == "true"
        warnings = "\n".join(reply.headers.get_all("Warning"))
    assert built["filter"]["since"] == "2026-11-01"
    assert built["filter"]["platform_source"] == "cursor"
    assert "dateStart is deprecated, use since" in warnings
    assert "platformSource is deprecated, use platform_source" in warnings


# ----- CLI -------------------------------------------------------------------------------------


COMMON = {"--data-dir", "-d", "--json"}
KINDS = ("observations", "sessions", "prompts")


@pytest.mark.parametrize(
    ("path", "model", "own"),
    [
        (("search",), SearchQuery, {"query"}),  # the words are the argument
        (("corpus", "build"), CorpusFilter, {"name", "--description"}),
    ],
)
def test_cli_options_map_one_to_one_onto_the_fields(
    path: tuple[str, ...], model: type[Any], own: set[str]
) -> None:
    import typer.main

    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    visible = {o for p in command.params if not getattr(p, "hidden", False) for o in p.opts}
    fields = {option_of(f) for f in model.model_fields if f != "query" or "query" not in own}
    assert fields <= visible, fields - visible
    assert visible - fields <= COMMON | own, visible - fields - COMMON - own
    hidden = {o for p in command.params if getattr(p, "hidden", False) for o in p.opts}
    assert hidden <= set(LEGACY_OPTIONS)
    assert {LEGACY_OPTIONS[o] for o in hidden} <= set(model.model_fields)


def test_cli_gives_the_http_hits_and_notes_old_options(svc: Service) -> None:
    _, _, want = http_search(svc, FILTER)
    new = cli(
        svc,
        "search",
        "--types",
        "bugfix,decision",
        "--since",
        "2026-11-01",
        "--order-by",
        "date_desc",
        "--limit",
        "50",
        "--json",
    )
    assert new.exit_code == 0, new.output
    assert ids(json.loads(new.stdout)) == ids(want)
    assert "deprecated" not in new.stderr
    old = cli(
        svc,
        "search",
        "--obs-type",
        "bugfix",
        "--obs-type",
        "decision",
        "--since",
        "2026-11-01",
        "--order-by",
        "date_desc",
        "--limit",
        "50",
        "--json",
    )
    assert old.exit_code == 0, old.output
    assert ids(json.loads(old.stdout)) == ids(want)
    assert "note: --obs-type is deprecated, use --types" in old.stderr


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("--obs-type", "--types", "bugfix"),
        ("--type", "--kinds", "prompts"),
        ("--platform", "--platform-source", "cursor"),
    ],
)
def test_cli_each_old_search_option_still_filters_with_a_note(
    svc: Service, old: str, new: str, value: str
) -> None:
    base = ("search", "the", "--mode", "fts", "--limit", "100", "--json")
    want = cli(svc, *base, new, value)
    got = cli(svc, *base, old, value)
    assert want.exit_code == 0, want.output
    assert got.exit_code == 0, got.output
    hits = [
        {kind: [h["id"] for h in json.loads(r.stdout)[kind]] for kind in KINDS} for r in (got, want)
    ]
    assert hits[0] == hits[1]
    assert f"note: {old} is deprecated, use {new}" in got.stderr


def test_cli_corpus_build_old_platform_option_still_works_with_a_note(svc: Service) -> None:
    result = cli(svc, "corpus", "build", "old-cli", "--platform", "cursor", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["filter"]["platform_source"] == "cursor"
    assert "note: --platform is deprecated, use --platform-source" in result.stderr


def test_cli_old_and_new_option_disagreeing_is_refused_naming_both(svc: Service) -> None:
    result = cli(svc, "search", "--obs-type", "bugfix", "--types", "feature")
    assert result.exit_code == 1
    assert "--obs-type bugfix and --types feature disagree" in result.stderr


# ----- MCP -------------------------------------------------------------------------------------


def test_mcp_search_schema_is_the_model_and_gives_the_http_hits(svc: Service) -> None:
    _, _, want = http_search(svc, {**FILTER, "mode": "fts", "query": "the"})

    async def script(session: ClientSession) -> tuple[Any, str, str]:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        new = await session.call_tool(
            "search",
            {
                "query": "the",
                "mode": "fts",
                "types": ["bugfix", "decision"],
                "since": "2026-11-01",
                "order_by": "date_desc",
                "limit": 50,
            },
        )
        old = await session.call_tool(
            "search",
            {
                "query": "the",
                "mode": "fts",
                "obs_type": ["bugfix", "decision"],
                "dateStart": "2026-11-01",
                "orderBy": "date_desc",
                "limit": 50,
            },
        )
        return tools["search"].input_schema, text_of(new), text_of(old)

    server = params(svc.data_dir, svc.port)
    schema, new, old = run_session(server, script, svc.data_dir.parent / "mcp-stderr.log")
    assert set(SearchQuery.model_fields) <= set(schema["properties"])
    assert schema["properties"]["types"]["items"]["enum"][:2] == ["decision", "bugfix"]

    def listed(text: str) -> list[int]:
        return [int(m) for m in re.findall(r"^#(\d+)\s", text, re.MULTILINE)]

    assert listed(new) == ids(want)
    assert listed(old) == ids(want)
    assert "note:" not in new
    assert "note: obs_type is deprecated, use types" in old
    assert "note: dateStart is deprecated, use since" in old


# ----- no fifth parser -------------------------------------------------------------------------

# Files allowed to spell the old search names as string literals: the one table, the CLI's
# old options and the MCP tools' old argument lists, and the two clients of
# ``POST /api/observations/batch`` (the CLI's and the MCP server's sources, and ``show``'s
# fast path), whose body field is ``orderBy`` (claude-mem's get_observations contract): they
# send it, they parse nothing.
OLD_NAME_HOMES = {
    "workbench/recall/search_query.py",
    "workbench/cli/query_options.py",
    "workbench/cli/recall.py",
    "workbench/cli/recall_sources.py",
    "workbench/cli/fast_show.py",
    "workbench/mcp_server/recall_tools.py",
    "workbench/mcp_server/fetch_sources.py",
    "workbench/mcp_server/corpus_tools.py",
}


def test_no_other_module_parses_the_old_search_spellings() -> None:
    literal = re.compile(r"""["'](obs_type|obsType|--obs-type|orderBy)["']""")
    found = sorted(
        str(path.relative_to(ROOT))
        for package in ("workbench", "service")
        for path in (ROOT / package).rglob("*.py")
        if literal.search(path.read_text(encoding="utf-8"))
    )
    assert set(found) <= OLD_NAME_HOMES, found
