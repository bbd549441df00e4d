"""The CLI's command groups and the MCP server's tool modules are listed by hand, like routers.

No ``pkgutil`` discovery: what the ``workbench`` app and the MCP server are made of is read in
one place (``workbench/cli/app.py`` ``COMMAND_MODULES``, ``workbench/mcp_server/server.py``
``tool_modules``), and a module that defines ``register`` but is left out of its list fails
here instead of silently missing its commands or tools. Read with ``ast``, as
``tests/test_routes_layout.py`` reads ``ROUTERS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

CLI = ROOT / "workbench" / "cli"
MCP = ROOT / "workbench" / "mcp_server"


def registering_modules(package: Path) -> list[str]:
    """Modules of ``package`` with a module-level ``def register(...)``, by name."""
    return sorted(
        path.stem
        for path in package.glob("*.py")
        if any(
            isinstance(node, ast.FunctionDef) and node.name == "register"
            for node in ast.parse(path.read_text("utf-8")).body
        )
    )


def names_in(node: ast.expr) -> list[str]:
    """The plain names of a literal tuple or list."""
    assert isinstance(node, ast.Tuple | ast.List), ast.dump(node)
    names = []
    for element in node.elts:
        assert isinstance(element, ast.Name), ast.dump(element)
        names.append(element.id)
    return names


def command_modules_listed() -> list[str]:
    tree = ast.parse((CLI / "app.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMMAND_MODULES" for t in node.targets
        ):
            return names_in(node.value)
    raise AssertionError("workbench/cli/app.py has no literal COMMAND_MODULES tuple")


def tool_modules_listed() -> list[str]:
    tree = ast.parse((MCP / "server.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "tool_modules":
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
            assert len(returns) == 1
            assert returns[0].value is not None
            return names_in(returns[0].value)
    raise AssertionError("workbench/mcp_server/server.py has no tool_modules()")


def test_no_discovery() -> None:
    for path in (CLI / "app.py", MCP / "server.py"):
        source = path.read_text("utf-8")
        assert "pkgutil" not in source, path
        assert "import_module" not in source, path


def test_every_command_group_is_listed_once_by_name() -> None:
    listed = command_modules_listed()
    assert listed == sorted(set(listed)), "COMMAND_MODULES: each once, in name order"
    assert listed == registering_modules(CLI)


def test_every_tool_module_is_listed_once_by_name() -> None:
    listed = tool_modules_listed()
    assert listed == sorted(set(listed)), "tool_modules: each once, in name order"
    assert listed == registering_modules(MCP)


def test_the_lists_are_what_runs() -> None:
    from workbench.cli.app import COMMAND_MODULES
    from workbench.mcp_server.server import tool_modules

    assert [m.__name__.rsplit(".", 1)[1] for m in COMMAND_MODULES] == command_modules_listed()
    assert [m.__name__.rsplit(".", 1)[1] for m in tool_modules()] == tool_modules_listed()
