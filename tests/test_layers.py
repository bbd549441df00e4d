"""Layers inside ``workbench/``: its packages form one order, with no cycle, checked with ``ast``.

The order is written once, in the "Layers" list of ``workbench/__init__.py``'s docstring (the
package map a newcomer reads first); this file parses it and checks every import against it.
A *unit* is a subpackage of ``workbench/`` (``recall``, ``team``…) or a top-level module
(``settings``, ``ingest``…). Every ``import`` counts: at module level, inside functions (an
import hidden in a function still ties the two packages together, and is how the old
six-package knot went unseen) and under ``if TYPE_CHECKING:`` (a lower package that names a
higher one's types knows of it all the same).

Two rules: a unit imports only units of its own layer or a lower one (no arrow up), and the
unit graph has no cycle, inside a layer either. ``bench/import_layers.py`` prints the same
graph (arrows up, cycles) for any checkout.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from tests.conftest import ROOT
from tests.test_architecture import Import, imports_of, module_of, source_files

_LAYER_LINE = re.compile(r"^(\d+)\.\s+([a-z][a-z ]*):\s+(.*)$")


def layers(root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """The "Layers" list of ``workbench/__init__.py``: (layer name, its units), lowest first."""
    doc = ast.get_docstring(ast.parse((root / "workbench" / "__init__.py").read_text("utf-8")))
    found: list[tuple[str, list[str]]] = []
    for line in _joined_items(doc or ""):
        match = _LAYER_LINE.match(line)
        if match:
            assert int(match.group(1)) == len(found) + 1, f"layers out of number: {line}"
            units = [u.strip() for u in match.group(3).split(",") if u.strip()]
            found.append((match.group(2).strip(), units))
    return found


def _joined_items(doc: str) -> list[str]:
    """Numbered list items with their indented continuation lines joined onto them."""
    items: list[str] = []
    for line in doc.splitlines():
        if _LAYER_LINE.match(line):
            items.append(line.strip())
        elif items and line.startswith("   ") and line.strip():
            items[-1] += " " + line.strip()
        elif not line.strip():
            items.append("")
    return [i for i in items if i]


def units(root: Path = ROOT) -> set[str]:
    """Every subpackage and top-level module of ``workbench/`` (``__init__`` aside)."""
    base = root / "workbench"
    packages = {p.name for p in base.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in base.glob("*.py") if p.stem != "__init__"}
    return packages | modules


def unit_of(module: str) -> str | None:
    """``workbench.recall.search`` → ``recall``; ``workbench`` itself → None."""
    parts = module.split(".")
    return parts[1] if parts[0] == "workbench" and len(parts) > 1 else None


def unit_edges() -> dict[tuple[str, str], list[Import]]:
    """(importer unit, imported unit) → the import statements behind that arrow."""
    edges: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for path in source_files("workbench"):
        source = unit_of(module_of(path))
        for imp in imports_of(path):
            target = unit_of(imp.module)
            if source and target and source != target:
                edges[(source, target)].append(imp)
    return dict(edges)


def arrows_up(
    edges: dict[tuple[str, str], list[Import]], order: list[tuple[str, list[str]]]
) -> list[str]:
    """Each import from a unit to a unit of a higher layer, said with its file and line."""
    level = {unit: n for n, (_, members) in enumerate(order) for unit in members}
    return [
        f"{i} ({a} is in layer {level[a] + 1} {order[level[a]][0]!r}, {b} in layer "
        f"{level[b] + 1} {order[level[b]][0]!r}; move the shared piece down)"
        for (a, b), found in sorted(edges.items())
        if a in level and b in level and level[b] > level[a]
        for i in found
    ]


def cycles(edges: dict[tuple[str, str], list[Import]]) -> list[list[str]]:
    """The groups of units that reach each other (Tarjan's strongly connected components)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def _fake(*pairs: str) -> dict[tuple[str, str], list[Import]]:
    edges: dict[tuple[str, str], list[Import]] = {}
    for pair in pairs:
        a, b = pair.split(">")
        edges[(a, b)] = [Import(f"workbench.{b}", f"workbench/{a}.py", 1, False, True)]
    return edges


# ----- the checker itself (so the layer tests cannot pass vacuously) ---------------------------


def test_the_checker_finds_an_arrow_up_and_a_cycle() -> None:
    order = [("low", ["a"]), ("high", ["b", "c"])]
    assert arrows_up(_fake("b>a", "c>b"), order) == []
    up = arrows_up(_fake("a>b"), order)
    assert len(up) == 1
    assert "workbench/a.py:1 imports workbench.b" in up[0]
    assert cycles(_fake("a>b", "b>c")) == []
    assert cycles(_fake("a>b", "b>c", "c>a", "d>a")) == [["a", "b", "c"]]


def test_the_layers_are_read_from_the_package_map() -> None:
    order = layers()
    assert len(order) >= 5
    assert order[0][0] == "base"
    assert "errors" in order[0][1]
    assert order[-1][0] == "front ends"
    assert "cli" in order[-1][1]


def test_imports_inside_functions_count() -> None:
    """``cli`` imports most of its groups inside commands: they must show up as arrows."""
    edges = unit_edges()
    assert any(not i.module_level for found in edges.values() for i in found)


# ----- the layers ------------------------------------------------------------------------------


def test_every_unit_is_in_exactly_one_layer() -> None:
    listed = [unit for _, members in layers() for unit in members]
    twice = sorted({u for u in listed if listed.count(u) > 1})
    missing = sorted(units() - set(listed))
    unknown = sorted(set(listed) - units())
    assert (twice, missing, unknown) == ([], [], []), (
        "each package and top-level module of workbench/ goes in exactly one layer of the "
        "'Layers' list in workbench/__init__.py's docstring"
    )


def test_no_import_goes_up_a_layer() -> None:
    assert arrows_up(unit_edges(), layers()) == []


def test_the_packages_have_no_cycle() -> None:
    edges = unit_edges()
    found = cycles(edges)
    detail = [
        str(i)
        for group in found
        for (a, b), imps in sorted(edges.items())
        if a in group and b in group
        for i in imps[:1]
    ]
    assert found == [], detail


# ----- who opens SQLite -------------------------------------------------------------------------

# Files outside store/ that call ``sqlite3.connect``, each for a reason the store's policy
# does not fit; everything else opens the store through ``workbench.store.connection``.
OWN_SQLITE = {
    "workbench/recall/fusion.py": "a scratch :memory: database, no file",
    "workbench/recall/cold_context.py": "the hook's cold read: its own short timeout",
    "workbench/team/mirror.py": "its own derived file, journal_mode=DELETE, not the store",
}


def sqlite_connects(path: Path) -> list[int]:
    """Lines of ``path`` that call ``sqlite3.connect``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "connect"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "sqlite3"
    ]


def test_the_store_is_opened_through_store_connection() -> None:
    found = {
        path.relative_to(ROOT).as_posix(): lines
        for path in source_files("workbench")
        if "store" not in path.relative_to(ROOT).parts[1:2]
        for lines in [sqlite_connects(path)]
        if lines
    }
    assert set(found) == set(OWN_SQLITE), (
        "open the store with workbench.store.connection.connect (readonly=True to read)"
    )
