"""The suite writes nothing into the developer's HOME (issue 23).

marimo writes ``~/.config/marimo/marimo.toml`` and ``~/.cache/marimo/logs``, a Jupyter kernel
``~/.ipython/profile_default``: the notebook tests ran both into the real HOME. conftest's
``pytest_configure`` gives each run a HOME of its own. The proof runs those very tests in a
child pytest whose HOME is an empty folder, and checks that the folder is still empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.child_pytest import child_env, child_pytest
from tests.conftest import HOME_VARIABLES

pytestmark = pytest.mark.slow

# Tests that write under HOME when nothing redirects it: marimo as a child process (check) and
# in this process (a notebook's app.run), and a Jupyter kernel (nbconvert --execute).
WRITERS = (
    "tests/test_notebooks.py::test_marimo_check_passes",
    "tests/test_notebooks.py::test_corpus_builder_default_filter_is_the_whole_memory",
    "tests/test_notebooks.py::test_the_jupyter_example_reads_a_relative_data_dir",
)


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_notebook_tests_leave_an_empty_home_empty(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = child_env(HOME_VARIABLES, HOME=str(home))  # CI stays: a skip there fails
    proc = child_pytest(
        "-p", "no:xdist", f"--basetemp={tmp_path / 'basetemp'}", *WRITERS, env=env, timeout=900
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert f"{len(WRITERS)} passed" in proc.stdout
    assert listing(home) == []


def test_this_run_and_its_children_use_the_suite_home() -> None:
    home = Path(os.environ["HOME"])
    assert home.name.startswith("workbench-tests-home-")
    assert not any(os.environ.get(key) for key in HOME_VARIABLES)
    seen = subprocess.run(
        [sys.executable, "-c", "import pathlib; print(pathlib.Path.home())"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert seen.stdout.strip() == str(home)
