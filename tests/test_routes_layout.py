"""The service edge's layout (issue 13, item 3): who serves which path, and how they are listed.

- ``service/app.py`` lists its routers in one literal, ordered tuple (``ROUTERS``): no module
  discovery, and every router module in ``service/routes/`` is in it.
- The hot routes (hooks, health, context, search) are included first, because routes match in
  inclusion order and those are hit on every tool call and every SessionStart.
- Each path is served by the module named for its resource (``OWNERS``, first match wins).
- Every route is documented in ``/openapi.json``, except the viewer's page and assets
  (``UNDOCUMENTED``: static files, not API; the fuzz suite lists them by hand).
"""

from __future__ import annotations

import ast
import re
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute

from tests.conftest import ROOT

# (path pattern, module in service/routes/): the first pattern that matches names the owner.
OWNERS: list[tuple[str, str]] = [
    (r"^/api/sessions(/|$)", "sessions"),
    (r"^/api/prompts$", "prompts"),
    (r"^/api/observations?(/|$)", "observations"),
    (r"^/api/summaries$", "summaries"),
    (r"^/api/(search|timeline)$", "search"),
    (r"^/api/context/", "context"),
    (r"^/api/corpus/\{name\}/(prime|query|reprime)$", "agent"),
    (r"^/api/corpus(/|$)", "corpora"),
    (r"^/api/stats(/|$)", "analytics"),
    (r"^/api/projects$", "projects"),
    (r"^/api/settings$", "settings"),
    (r"^/api/(queue/|spool/|recompress$)", "queue"),
    (r"^/stream$", "stream"),
    (r"^/(|static/\{name\}|favicon\.ico)$", "viewer"),
    (r"^/api/(health|readiness)$", "health"),
    (r"^/api/(reindex|index/status)$", "index"),
    (r"^/api/(export|import)$", "transfer"),
    (r"^/api/transcripts/", "transcripts"),
    (r"^/api/memory/", "memory"),
    (r"^/api/team/", "team"),
    (r"^/api/stale$", "stale"),
]
HOT = ["sessions", "health", "context", "search"]
UNDOCUMENTED = {("GET", "/"), ("GET", "/static/{name}"), ("GET", "/favicon.ico")}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    from service.app import create_app
    from workbench.settings import load_settings

    return create_app(load_settings(tmp_path_factory.mktemp("layout")), pid_lock=False)


def api_routes(app: FastAPI) -> list[APIRoute]:
    """Every ``APIRoute`` the app serves (FastAPI 0.165 keeps included routers nested)."""
    found: list[APIRoute] = []
    pending: list[Any] = list(app.routes)
    while pending:
        route = pending.pop(0)
        if isinstance(route, APIRoute):
            found.append(route)
        elif hasattr(route, "original_router"):
            pending.extend(route.original_router.routes)
    assert len(found) > 40, "the walk found too few routes to check anything"
    return found


def documented_path(path: str) -> str:
    """The path as OpenAPI spells it (``{name:path}`` → ``{name}``)."""
    return re.sub(r"\{(\w+):\w+\}", r"{\1}", path)


def owner_of(path: str) -> str | None:
    return next((module for pattern, module in OWNERS if re.search(pattern, path)), None)


def routers_listed_in_app() -> list[str]:
    """The module names in ``ROUTERS = (module.router, …)`` of service/app.py, in order."""
    tree = ast.parse((ROOT / "service" / "app.py").read_text("utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.AnnAssign | ast.Assign)
            and any(
                isinstance(t, ast.Name) and t.id == "ROUTERS"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            and isinstance(node.value, ast.Tuple | ast.List)
        ):
            names = []
            for element in node.value.elts:
                assert isinstance(element, ast.Attribute)
                assert element.attr == "router"
                assert isinstance(element.value, ast.Name)
                names.append(element.value.id)
            return names
    raise AssertionError("service/app.py has no literal ROUTERS tuple")


def route_modules_on_disk() -> set[str]:
    """Modules in service/routes/ that define a module-level ``router``."""
    found = set()
    for path in (ROOT / "service" / "routes").glob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        if any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "router" for t in n.targets)
            for n in tree.body
        ):
            found.add(path.stem)
    return found


def test_app_lists_its_routers_explicitly() -> None:
    source = (ROOT / "service" / "app.py").read_text("utf-8")
    assert "pkgutil" not in source
    assert "importlib" not in source
    listed = routers_listed_in_app()
    # The tuple names modules through their import; resolve aliases (``settings_routes``).
    tree = ast.parse(source)
    alias = {
        (a.asname or a.name): a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "service.routes"
        for a in n.names
    }
    modules = [alias.get(name, name) for name in listed]
    assert len(modules) == len(set(modules)), modules
    assert set(modules) == route_modules_on_disk()
    assert modules[: len(HOT)] == HOT


def test_every_route_is_served_by_the_module_named_for_its_resource(app: FastAPI) -> None:
    wrong = []
    for route in api_routes(app):
        module = route.endpoint.__module__
        expected = owner_of(route.path)
        if expected is None or module != f"service.routes.{expected}":
            wrong.append(f"{sorted(route.methods)} {route.path}: {module} (expected {expected})")
    assert wrong == []


def test_every_owner_serves_something(app: FastAPI) -> None:
    """No stale row in OWNERS (a pattern matching nothing would pin nothing)."""
    paths = [r.path for r in api_routes(app)]
    idle = [p for p, _ in OWNERS if not any(re.search(p, path) for path in paths)]
    assert idle == []


def test_every_route_is_documented_in_openapi(app: FastAPI) -> None:
    spec = app.openapi()
    missing = [
        (method, route.path)
        for route in api_routes(app)
        for method in sorted(route.methods - {"HEAD"})
        if (method, route.path) not in UNDOCUMENTED
        and method.lower() not in spec["paths"].get(documented_path(route.path), {})
    ]
    assert missing == []


def test_routes_reach_the_runtime_only_through_typed_attributes() -> None:
    """No ``getattr`` on the runtime or its parts, no ``app.state``, no untyped ``runtime``.

    ``service/deps.py`` is the one place that reads ``app.state``; routes get a ``Runtime``.
    """
    found = []
    for path in sorted((ROOT / "service" / "routes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            where = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr"}
                and re.search(r"runtime|indexer|state", ast.unparse(node.args[0]))
            ):
                found.append(f"{where} {ast.unparse(node)}")
            if isinstance(node, ast.Attribute) and ast.unparse(node).endswith("app.state"):
                found.append(f"{where} {ast.unparse(node)}")
            if isinstance(node, ast.arg) and node.arg == "runtime":
                annotation = ast.unparse(node.annotation) if node.annotation else "nothing"
                if annotation not in {"Runtime", "RuntimeDep"}:
                    found.append(f"{where} runtime annotated {annotation}")
    assert found == []


def test_routes_hold_no_sql() -> None:
    """Routes parse, call the library and shape; SQL lives in ``workbench/`` (store, ledger…)."""
    found = []
    for path in sorted((ROOT / "service" / "routes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                ("execute", "executemany", "executescript")
            ):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node.func)}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.match(r"\s*(SELECT|INSERT|UPDATE|DELETE FROM|WITH)\b", node.value):
                    found.append(f"{path.name}:{node.lineno} {node.value[:40]!r}")
    assert found == []
