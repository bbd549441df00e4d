"""In CI a skipped test is a failure (issue 23): a skip there is a test that can never fail.

CI runs as root with chromium, PostgreSQL, node and the agents' CLIs installed (.ci/run), so
every environment skip in the suite should not trigger there. conftest turns one that does into
a failure naming its reason. Checked on a one-test file in a child pytest that loads conftest.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.child_pytest import child_env, child_pytest

pytestmark = pytest.mark.slow

SKIPPING = """
import pytest

if False:
    pytest.skip("MODULE", allow_module_level=True)


def test_needs_something_missing():
    pytest.skip("no frobnicator on this machine")
"""


def run_child(test_file: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    env = child_env(("CI",), **({"CI": "true"} if ci else {}))
    return child_pytest(
        "-p", "tests.conftest", f"--rootdir={test_file.parent}", "-rA", str(test_file), env=env
    )  # fmt: skip


def test_a_skip_fails_in_ci_and_says_why(tmp_path: Path) -> None:
    test_file = tmp_path / "test_skipping.py"
    test_file.write_text(SKIPPING, "utf-8")
    in_ci = run_child(test_file, ci=True)
    assert in_ci.returncode == 1, in_ci.stdout + in_ci.stderr
    assert "1 failed" in in_ci.stdout
    assert "skipped in CI, where every test must run" in in_ci.stdout
    assert "no frobnicator on this machine" in in_ci.stdout
    elsewhere = run_child(test_file, ci=False)
    assert elsewhere.returncode == 0, elsewhere.stdout + elsewhere.stderr
    assert "1 skipped" in elsewhere.stdout


def test_a_skipped_module_fails_in_ci_and_says_why(tmp_path: Path) -> None:
    test_file = tmp_path / "test_skipping_module.py"
    test_file.write_text(SKIPPING.replace("if False", "if True"), "utf-8")
    in_ci = run_child(test_file, ci=True)
    assert in_ci.returncode != 0, in_ci.stdout + in_ci.stderr
    assert "skipped in CI, where every test must run" in in_ci.stdout
    assert "MODULE" in in_ci.stdout
    elsewhere = run_child(test_file, ci=False)
    assert elsewhere.returncode == 5, elsewhere.stdout + elsewhere.stderr  # no test ran
    assert "1 skipped" in elsewhere.stdout
