"""The import graph inside ``workbench/``: arrows up the layer order, and cycles, for a checkout.

Prints, for the checkout at ``--root`` (default: this one), every arrow between two units
(a subpackage or a top-level module of ``workbench/``) that goes up the layer order written in
*this* checkout's ``workbench/__init__.py`` (so an old checkout is judged by today's order),
and every group of units that import each other in a cycle, with one import behind each
arrow and whether any of them runs at module level or only inside a function.

It reads source with ``ast`` (``tests/test_architecture.py``'s scanner, the root's own copy),
imports nothing of the checkout. ``tests/test_layers.py`` asserts both lists are empty.

Usage: python bench/import_layers.py [--root /work/wt/base] [--all]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to scan")
    parser.add_argument("--all", action="store_true", help="print every arrow, not just bad ones")
    args = parser.parse_args()
    root = args.root.resolve()
    sys.path.insert(0, str(root))  # the root's own tests.conftest (ROOT) and scanner
    spec = importlib.util.spec_from_file_location("layers_check", HERE / "tests/test_layers.py")
    assert spec is not None
    assert spec.loader is not None
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)

    order = check.layers(HERE)
    edges = check.unit_edges()
    listed = {u for _, members in order for u in members}
    print(f"checkout {root}: {len(check.units(root))} units, {len(edges)} arrows")
    print(f"units in no layer of today's order: {sorted(check.units(root) - listed) or 'none'}")
    up = check.arrows_up(edges, order)
    print(f"\narrows up ({len(up)} imports):")
    for line in up:
        print("  ", line)
    groups = check.cycles(edges)
    print(f"\ncycles ({len(groups)}):")
    for group in groups:
        print("   " + " <-> ".join(group))
        for (a, b), imps in sorted(edges.items()):
            if a in group and b in group:
                where = "module level" if any(i.module_level for i in imps) else "in functions"
                more = f" (+{len(imps) - 1} more)" if len(imps) > 1 else ""
                print(f"      {a} -> {b} [{where}] {imps[0]}{more}")
    if args.all:
        print("\nall arrows:")
        for (a, b), imps in sorted(edges.items()):
            print(f"   {a} -> {b} ({len(imps)})")


if __name__ == "__main__":
    main()
