"""Each package's docstring is its module map (STYLE lesson 1), kept complete by this test.

For every package under ``workbench/``: each module and subpackage is named in the package
docstring (as ````name```` or ````name/````), and each bullet that names a module
(``- ``name`` …``) names one that exists, so a module moved or deleted does not linger in the
map. The maps are what ARCHITECTURE.md sends a newcomer to: this keeps them the code's own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

_BULLET = re.compile(r"^- ``([a-z_][a-z0-9_]*)/?``(?:\s|$)", re.MULTILINE)


def packages() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "workbench").rglob("__init__.py"))


def docstring(package: Path) -> str:
    tree = ast.parse((package / "__init__.py").read_text("utf-8"))
    return ast.get_docstring(tree) or ""


def members(package: Path) -> set[str]:
    """The package's modules (``__init__`` aside) and subpackages."""
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    subpackages = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    return modules | subpackages


def rel(package: Path) -> str:
    return package.relative_to(ROOT).as_posix()


def test_the_check_sees_a_gap_and_a_stale_line() -> None:
    doc = "Modules:\n- ``a``  one\n- ``gone/``  two\n- ``NAME``: not a module\n"
    assert set(_BULLET.findall(doc)) == {"a", "gone"}
    assert len(packages()) > 10


@pytest.mark.parametrize("package", packages(), ids=rel)
def test_every_module_is_in_its_package_map(package: Path) -> None:
    doc = docstring(package)
    missing = sorted(
        n for n in members(package) if f"``{n}``" not in doc and f"``{n}/``" not in doc
    )
    assert missing == [], f"add a line for each to the docstring of {rel(package)}/__init__.py"


@pytest.mark.parametrize("package", packages(), ids=rel)
def test_every_map_line_names_a_module_that_exists(package: Path) -> None:
    stale = sorted(set(_BULLET.findall(docstring(package))) - members(package))
    assert stale == [], f"{rel(package)}/__init__.py lists modules that are not there"
