"""A child pytest run, for the tests of the suite's own rules (issue 23).

The rules live in conftest (a skip fails in CI, the fast tier, HOME, bytecode): each is proven
by a pytest started as a real child process, not by calling conftest's hooks. Shared by
``test_suite_ci_skips``, ``test_suite_tiers``, ``test_suite_bytecode`` and ``test_suite_home``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from tests.conftest import LEAKY_ENV, ROOT


def child_env(drop: Iterable[str] = ("CI",), **extra: str) -> dict[str, str]:
    """This environment without the leaking variables, ``drop`` and pytest's own (an xdist
    worker's ids, ``PYTEST_ADDOPTS``), plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in (*LEAKY_ENV, *drop) and not k.startswith("PYTEST_")
    }
    env.update(extra)
    return env


def child_pytest(
    *args: str, cwd: Path = ROOT, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` in ``cwd``, its output as text."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_folder_run(
    folder: Path, files: dict[str, str], *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    """A pytest of its own in ``folder`` (its pytest.ini: ``testpaths = t``, ``files`` under
    ``t/``), loading this suite's conftest: run from the folder, which the ini makes the
    rootdir, so a run that names no tests reads only that ``testpaths``."""
    (folder / "pytest.ini").write_text("[pytest]\ntestpaths = t\n", "utf-8")
    (folder / "t").mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / "t" / name).write_text(text, "utf-8")
    env = child_env(("CI", "WORKBENCH_TEST_ALL"), PYTHONPATH=str(ROOT), **extra)
    return child_pytest("-p", "tests.conftest", "-rA", *args, cwd=folder, env=env)
