"""How typed the service's edge is (issue 23, item 1): three counts, read from source with ``ast``.

Issue 23 reported "38 handlers declare a response model but build dicts; 143 functions return
``dict[str, Any]``; 4 routes return a raw ``Response`` whose model is documentation". This script
measures the same three things for a checkout (``--root``, default this one; ``--root`` may be
given twice for a before/after table from one run), importing nothing of it:

- **dict handlers**: a route handler in ``service/routes/`` (a function decorated with
  ``@<router>.get|post|put|patch|delete``) that declares a response model (``response_model=X``,
  X not ``None``) and builds a dict for it: its return annotation is ``dict[...]`` /
  ``JsonObject``, or a ``return`` gives a dict literal, comprehension or ``dict(...)`` call.
  FastAPI then validates the dict against the model after the handler: the model is a check.
- **dict[str, Any]**: functions anywhere in ``workbench/`` and ``service/`` annotated
  ``-> dict[str, Any]``.
- **raw Response**: a route handler annotated to return a ``Response`` (or a subclass) while
  its decorator names a model (``response_model=`` or ``responses={..: {"model": ..}}``), so
  the model documents a reply the handler serialises by hand.

The first and third are also split by route module, and counted for the read side (the GET
routes of ``READ_SIDE``'s modules). ``tests/test_typed_edges.py`` checks the read side over the
live route table: each such handler returns the model its route declares.

Usage: python bench/typed_edges.py [--root /work/wt/base] [--root .] [--list]
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

VERBS = {"get", "post", "put", "patch", "delete"}
# The read side: the GET routes of the modules that answer from memory (search, timeline, get,
# context, stats and analytics, corpora, projects, the team's refs). Their writes (a corpus
# build, a forget) are not counted in it.
READ_SIDE = (
    "search",
    "observations",
    "context",
    "analytics",
    "corpora",
    "projects",
    "summaries",
    "prompts",
    "team",
)


@dataclass(frozen=True)
class Handler:
    """One route handler: where it is and which of the counts it falls in."""

    module: str
    name: str
    verb: str
    builds_dict: bool
    raw_response: bool


def _route_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Call | None:
    for deco in node.decorator_list:
        if (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and deco.func.attr in VERBS
        ):
            return deco
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _declares_model(call: ast.Call) -> bool:
    model = _keyword(call, "response_model")
    return model is not None and not (isinstance(model, ast.Constant) and model.value is None)


def _documents_model(call: ast.Call) -> bool:
    responses = _keyword(call, "responses")
    return _declares_model(call) or (
        responses is not None and "'model'" in ast.unparse(responses).replace('"', "'")
    )


def _own_returns(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
    """The ``return`` statements of ``node`` itself, not of functions defined inside it."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(item, ast.Return):
            found.append(item)
        stack.extend(ast.iter_child_nodes(item))
    return found


def _is_dict_value(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict | ast.DictComp):
        return True
    return (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
    )


def _annotation(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    return ast.unparse(node.returns) if node.returns is not None else ""


def route_handlers(root: Path) -> list[Handler]:
    """Every route handler in ``root``'s ``service/routes/``."""
    handlers: list[Handler] = []
    for path in sorted((root / "service/routes").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            deco = _route_decorator(node)
            if deco is None:
                continue
            assert isinstance(deco.func, ast.Attribute)
            verb = deco.func.attr
            returns = _annotation(node)
            builds_dict = _declares_model(deco) and (
                returns.startswith("dict")
                or returns == "JsonObject"
                or any(_is_dict_value(r.value) for r in _own_returns(node))
            )
            raw = returns.split(".")[-1].endswith("Response") and _documents_model(deco)
            handlers.append(Handler(path.stem, node.name, verb, builds_dict, raw))
    return handlers


def dict_any_functions(root: Path) -> list[str]:
    """``path:function`` for each function in ``workbench/``, ``service/`` -> dict[str, Any]."""
    found: list[str] = []
    for top in ("workbench", "service"):
        for path in sorted((root / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and _annotation(node).replace(" ", "") == "dict[str,Any]"
                ):
                    found.append(f"{path.relative_to(root)}:{node.name}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, action="append", help="a checkout (repeatable)")
    parser.add_argument("--list", action="store_true", help="name every handler counted")
    args = parser.parse_args()
    roots = [r.resolve() for r in (args.root or [HERE])]
    handlers = {root: route_handlers(root) for root in roots}
    dict_any = {root: dict_any_functions(root) for root in roots}

    width = 44
    head = "".join(f"{str(r)[-22:]:>24}" for r in roots)
    print(f"{'count':<{width}}{head}")
    rows = [
        (
            "handlers: response model, builds a dict",
            lambda r: sum(h.builds_dict for h in handlers[r]),
        ),
        ("  of them read-side GETs", lambda r: _read(handlers[r], "builds_dict")),
        ("functions -> dict[str, Any]", lambda r: len(dict_any[r])),
        (
            "routes: raw Response, model documented",
            lambda r: sum(h.raw_response for h in handlers[r]),
        ),
        ("  of them read-side GETs", lambda r: _read(handlers[r], "raw_response")),
        ("route handlers in all", lambda r: len(handlers[r])),
    ]
    for label, count in rows:
        print(f"{label:<{width}}" + "".join(f"{count(r):>24}" for r in roots))

    modules = sorted({h.module for r in roots for h in handlers[r]})
    print(
        f"\ndict handlers by route module (* read side){'':<2}" + "".join(" " * 24 for _ in roots)
    )
    for module in modules:
        mark = "*" if module in READ_SIDE else " "
        counts = [Counter(h.module for h in handlers[r] if h.builds_dict)[module] for r in roots]
        if any(counts):
            print(f"  {mark} {module:<{width - 4}}" + "".join(f"{c:>24}" for c in counts))
    if args.list:
        for root in roots:
            print(f"\n{root}:")
            for h in handlers[root]:
                if h.builds_dict or h.raw_response:
                    kind = "dict" if h.builds_dict else "raw Response"
                    print(f"   {h.verb.upper():<6} {h.module}.{h.name}: {kind}")


def _read(handlers: list[Handler], field: str) -> int:
    return sum(getattr(h, field) for h in handlers if h.module in READ_SIDE and h.verb == "get")


if __name__ == "__main__":
    main()
