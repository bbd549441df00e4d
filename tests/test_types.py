"""The type checker is part of the suite: mypy over ``workbench/``, ``service/`` and ``hooks/``.

Why a test and not only ``make lint``: CI runs ``make test`` (``.ci/run``), so a type error
fails CI here. mypy runs as a real subprocess with the project's own ``[tool.mypy]`` settings
(pyproject.toml), exactly as ``make lint`` runs it. Its incremental cache lives in pytest's
cache dir (``.pytest_cache/d/mypy``): the first run checks everything (~1-2 min on 2 cores),
later runs only what changed (a few seconds).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.test_architecture import PACKAGES, source_files

pytestmark = pytest.mark.slow


def run_mypy(cache_dir: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "MYPY_CACHE_DIR")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            cache_dir,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_mypy_is_clean_over_every_source_file(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache_dir = str(cache.mkdir("mypy") if cache else tmp_path_factory.mktemp("mypy"))
    done = run_mypy(cache_dir)
    output = (done.stdout + done.stderr).strip()
    if "No module named mypy" in output:
        pytest.fail(f"mypy is not installed: pip install -e '.[dev]' (it pins it)\n{output}")
    assert done.returncode == 0, (
        f"mypy found type errors (fix them, or see pyproject.toml [tool.mypy]):\n{output}"
    )
    # The files setting covers all three packages: a narrowed or mistyped list would pass
    # by checking less.
    checked = re.search(r"(\d+) source files?\b", output)
    assert checked, output
    assert int(checked.group(1)) == len(source_files(*PACKAGES)), output
