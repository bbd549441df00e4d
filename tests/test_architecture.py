"""Import boundaries, checked by parsing the source with ``ast`` (nothing is imported to check).

- ``workbench/`` never imports ``service/`` or ``hooks/``: the library sits below both.
- ``hooks/`` import only the standard library and ``workbench.locate``/``spool``/``redact``/
  ``spawn``/``instance``/``own_tools`` (and, for SessionStart with the service cold, the
  stdlib-only modules that build its block from the store), checked transitively, including
  the package ``__init__`` files a submodule import runs: a hook pays for every module it
  loads, on every tool call.
- Those workbench modules (and ``workbench/__init__.py``) are stdlib-only.
- Heavy libraries are imported at module level only by the one module that wraps each
  (``HEAVY_ALLOWLIST``); everywhere else they are imported inside the function that needs them,
  so hooks and ``workbench --help`` stay fast.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("workbench", "service", "hooks")
HOOK_ALLOWED = {
    "workbench.locate",
    "workbench.spool",
    "workbench.redact",
    "workbench.spawn",
    "workbench.instance",
    "workbench.own_tools",
    # SessionStart with the service cold (imported only then): the block from the store.
    "workbench.recall.cold_context",
    "workbench.recall.context",
    "workbench.recall.render",
    "workbench.tokens",
    "workbench.recall.resume",
    "workbench.recall.ledger_reads",
    "workbench.staleness",  # stale marks in that block (issue 22 item 5), stdlib only
    "workbench.staleness.check",
    "workbench.staleness.blobs",
    "workbench.store.schema",
    "workbench.store.connection",
    "workbench.store.identifiers",
    "workbench.errors",
}
HEAVY = {
    "faiss",
    "sentence_transformers",
    "torch",
    "duckdb",
    "polars",
    "anthropic",
    "openai",
    "marimo",
    "uvicorn",
    "model2vec",
    "numpy",
}
# library -> the files allowed to import it at module level (the module that wraps it).
HEAVY_ALLOWLIST: dict[str, set[str]] = {
    # __main__ runs it; http_protocol subclasses its protocol (imported by __main__ only).
    "uvicorn": {"service/__main__.py", "service/http_protocol.py"},
}
STDLIB = set(sys.stdlib_module_names)


@dataclass(frozen=True)
class Import:
    module: str  # absolute dotted name (relative imports resolved)
    file: str  # repo-relative path
    line: int
    module_level: bool  # executed when the file is imported (not inside a function)
    runtime: bool  # False under ``if TYPE_CHECKING:``

    @property
    def top(self) -> str:
        return self.module.split(".", 1)[0]

    def __str__(self) -> str:
        return f"{self.file}:{self.line} imports {self.module}"


def source_files(*packages: str) -> list[Path]:
    return sorted(
        p
        for pkg in packages
        if (ROOT / pkg).is_dir()
        for p in (ROOT / pkg).rglob("*.py")
        if "__pycache__" not in p.parts
    )


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def file_of(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@cache
def imports_of(path: Path) -> tuple[Import, ...]:
    """Every import statement in the repo file ``path``."""
    package = module_of(path) if path.name == "__init__.py" else module_of(path).rpartition(".")[0]
    source = path.read_text(encoding="utf-8")
    return parse_imports(source, path.relative_to(ROOT).as_posix(), package)


def parse_imports(source: str, rel: str, package: str) -> tuple[Import, ...]:
    """Every import statement in ``source``, relative ones resolved against ``package``."""
    found: list[Import] = []

    def record(node: ast.Import | ast.ImportFrom, module_level: bool, runtime: bool) -> None:
        names: list[str]
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from workbench import locate`` imports the module workbench.locate.
            names = [
                f"{base}.{a.name}" if file_of(f"{base}.{a.name}") else base for a in node.names
            ]
        found.extend(
            Import(n, rel, node.lineno, module_level, runtime) for n in dict.fromkeys(names)
        )

    def visit(node: ast.AST, module_level: bool, runtime: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            record(node, module_level, runtime)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, module_level, False)
            for child in node.orelse:
                visit(child, module_level, runtime)
            return
        inner = module_level and not isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        )
        for child in ast.iter_child_nodes(node):
            visit(child, inner, runtime)

    visit(ast.parse(source, filename=rel), True, True)
    return tuple(found)


def runtime_closure(start: list[Path]) -> tuple[set[str], list[Import]]:
    """Repo modules reached from ``start`` at run time, and every non-repo import met on the way.

    Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` too, so those count.
    """
    reached: set[str] = set()
    external: list[Import] = []
    queue = list(start)
    seen: set[Path] = set()
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        for imp in imports_of(path):
            if not imp.runtime:
                continue
            if imp.top not in PACKAGES:
                external.append(imp)
                continue
            reached.add(imp.module)
            parts = imp.module.split(".")
            for depth in range(1, len(parts) + 1):
                target = file_of(".".join(parts[:depth]))
                if target is not None:
                    queue.append(target)
    return reached, external


# ----- the scanner itself (so the boundary tests cannot pass vacuously) ------------------------


def test_scanner_sees_imports_relative_imports_and_levels() -> None:
    runtime = {i.module for i in imports_of(ROOT / "hooks" / "_runtime.py")}
    assert {"json", "socket", "workbench.locate", "workbench.spool"} <= runtime
    if (ROOT / "service" / "__main__.py").exists():
        assert any(i.top == "uvicorn" for i in imports_of(ROOT / "service" / "__main__.py"))
    code = (
        "from typing import TYPE_CHECKING\nimport os\nif TYPE_CHECKING:\n    import torch\n"
        "def f():\n    import numpy\nclass C:\n    import duckdb\nfrom . import spool\n"
    )
    parsed = parse_imports(code, "workbench/_probe.py", "workbench")
    got = {i.module: (i.module_level, i.runtime) for i in parsed}
    assert got == {
        "typing": (True, True),
        "os": (True, True),
        "torch": (True, False),
        "numpy": (False, True),
        "duckdb": (True, True),
        "workbench.spool": (True, True),
    }


# ----- the boundaries --------------------------------------------------------------------------


def test_workbench_never_imports_service_or_hooks() -> None:
    bad = [
        str(i)
        for p in source_files("workbench")
        for i in imports_of(p)
        if i.top in {"service", "hooks"}
    ]
    assert bad == []


def test_hooks_import_only_the_stdlib_and_the_allowed_workbench_modules() -> None:
    files = source_files("hooks")
    assert files, "hooks/ has no modules"
    bad = [
        str(i)
        for p in files
        for i in imports_of(p)
        if not (i.top in STDLIB or i.module in HOOK_ALLOWED or i.top == "hooks")
    ]
    assert bad == []


def test_everything_a_hook_loads_is_stdlib_only() -> None:
    reached, external = runtime_closure(source_files("hooks"))
    repo_workbench = {m for m in reached if m.split(".", 1)[0] == "workbench"}
    assert repo_workbench <= HOOK_ALLOWED
    assert [str(i) for i in external if i.top not in STDLIB] == []


@pytest.mark.parametrize("module", sorted(HOOK_ALLOWED | {"workbench"}))
def test_hook_side_workbench_modules_are_stdlib_only(module: str) -> None:
    path = file_of(module)
    assert path is not None
    bad = [
        str(i)
        for i in imports_of(path)
        if i.runtime and i.top not in STDLIB and i.module not in HOOK_ALLOWED
    ]
    assert bad == []


def test_heavy_libraries_are_imported_lazily() -> None:
    bad = [
        f"{i} at module level (import it inside the function that needs it, or add the "
        f"wrapping module to HEAVY_ALLOWLIST)"
        for p in source_files(*PACKAGES)
        for i in imports_of(p)
        if i.runtime
        and i.module_level
        and i.top in HEAVY
        and i.file not in HEAVY_ALLOWLIST.get(i.top, set())
    ]
    assert bad == []


def test_heavy_allowlist_names_heavy_libraries() -> None:
    assert set(HEAVY_ALLOWLIST) <= HEAVY


def test_hook_scripts_do_not_shadow_the_stdlib() -> None:
    """A script's folder is ``sys.path[0]``: ``hooks/select.py`` would hide ``select``."""
    assert [p.stem for p in source_files("hooks") if p.stem in STDLIB] == []
