"""A plain `make test` is the fast tier; CI and `make test-all` run every tier (issue 23).

The long end-to-end tests are marked ``slow`` (whole files with ``pytestmark``). conftest leaves
them out of a run that names no tests, unless ``CI`` or ``WORKBENCH_TEST_ALL`` is set or ``-m``
is given. Checked in a child pytest that loads conftest, on a two-test folder of its own (its
``testpaths``), so "the default run" is that folder and not the whole suite; and on the real
suite's files, so that what CI runs is every test there is.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tests.child_pytest import child_env, child_pytest, one_folder_run
from tests.conftest import ROOT

SLOW = pytest.mark.slow  # each child pytest costs seconds: only CI's cases stay in the fast tier

TWO_TESTS = """
import pytest


def test_quick():
    pass


@pytest.mark.slow
def test_long_end_to_end():
    pass
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


def run_child(folder: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess[str]:
    return one_folder_run(folder, {"test_two.py": TWO_TESTS}, *args, **env_extra)


def test_a_plain_run_is_the_fast_tier_and_says_so(folder: Path) -> None:
    proc = run_child(folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 1 deselected" in proc.stdout
    assert "PASSED t/test_two.py::test_quick" in proc.stdout
    assert "test_long_end_to_end" not in proc.stdout
    assert "fast tier: the slow end-to-end tests were left out" in proc.stdout


# CI's case runs in the fast tier too: were it broken, CI would leave the slow tier out, and
# with it every test that could say so.
@pytest.mark.parametrize(
    ("args", "env", "reason"),
    [
        ((), {"CI": "true"}, "CI is set"),
        pytest.param((), {"WORKBENCH_TEST_ALL": "1"}, "WORKBENCH_TEST_ALL is set", marks=SLOW),
        pytest.param(("t/test_two.py",), {}, "tests were named", marks=SLOW),
        pytest.param(("-m", "slow or not slow"), {}, "-m was given", marks=SLOW),
    ],
)
def test_ci_test_all_named_tests_and_marks_run_every_tier(
    folder: Path, args: tuple[str, ...], env: dict[str, str], reason: str
) -> None:
    proc = run_child(folder, *args, **env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert "deselected" not in proc.stdout
    assert "PASSED t/test_two.py::test_long_end_to_end" in proc.stdout
    assert f"every tier ran ({reason})" in proc.stdout


def test_ci_runs_every_tier_of_the_real_suite() -> None:
    """.ci/run exports CI, and with CI set nothing of the suite is left out."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^export CI=", ci, re.M), "CI must run every tier: .ci/run exports CI"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    # CI's workers: each is a whole process of the suite, so every tier still runs in one of them
    assert re.search(r"^TEST_WORKERS \?= \$\(if \$\(CI\),\d+,\d+\)$", makefile, re.M)


@pytest.mark.slow
def test_the_slow_tier_is_marked_and_the_fast_tier_is_most_of_the_suite() -> None:
    """Both tiers hold tests, the slow one from many files: a mark lost in a refactor would
    move a file's tests silently (this file's own slow cases alone do not pass it)."""
    env = child_env(("CI", "WORKBENCH_TEST_ALL"))
    proc = child_pytest(
        "-o", "addopts=", "--collect-only", "-q", "-m", "slow", "tests", env=env, timeout=600
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    found = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", proc.stdout)
    assert found, proc.stdout[-2000:]
    slow, total = int(found.group(1)), int(found.group(2))
    assert 0 < slow < total / 2
    files = {line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line}
    assert len(files) >= 50, sorted(files)


# Whole kinds of test file that belong to the slow tier: a new one is marked with the rest.
SLOW_KINDS = ("test_fuzz_", "test_real_", "test_team_", "test_notebooks", "test_viewer_browser")


def _marked_slow(tree: ast.Module) -> bool:
    """``pytestmark = pytest.mark.slow`` (alone or in a list) at the top of a test file."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            return "pytest.mark.slow" in ast.unparse(node.value)
    return False


def test_every_fuzz_real_agent_team_notebook_and_browser_file_is_in_the_slow_tier() -> None:
    files = [p for p in sorted((ROOT / "tests").glob("test_*.py")) if p.stem.startswith(SLOW_KINDS)]
    assert len(files) > 40
    unmarked = [p.name for p in files if not _marked_slow(ast.parse(p.read_text("utf-8")))]
    assert unmarked == [], "add `pytestmark = pytest.mark.slow` to " + ", ".join(unmarked)
