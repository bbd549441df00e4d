"""The README picture is refreshed by ``make screenshot``, never as a side effect of a test run.

The viewer test (tests/test_viewer_browser.py) writes its screenshot to a temporary folder; the
make target points it at ``docs/screenshot.png`` through ``VIEWER_SCREENSHOT``. Both are run
here for real (a child pytest, and ``make``) with headless Chromium.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.viewer_page import CHROMIUM, MISSING

pytestmark = pytest.mark.slow

if not CHROMIUM.exists():
    pytest.skip(MISSING, allow_module_level=True)
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

README_PICTURE = ROOT / "docs" / "screenshot.png"
SCREENSHOT_TEST = "tests/test_viewer_browser.py::test_screenshot_of_the_feed_with_demo_data"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def run_screenshot_test(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:randomly", SCREENSHOT_TEST],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_viewer_test_leaves_the_readme_picture_alone(tmp_path: Path) -> None:
    before = digest(README_PICTURE)
    run = run_screenshot_test(VIEWER_SCREENSHOT="")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout  # run, not skipped
    assert digest(README_PICTURE) == before


def test_make_screenshot_writes_the_picture_it_is_given(tmp_path: Path) -> None:
    """The real target (``SCREENSHOT`` defaults to the README's picture; here a temporary one)."""
    picture = tmp_path / "pictures" / "screenshot.png"
    picture.parent.mkdir()
    run = subprocess.run(
        [
            "make",
            "screenshot",
            f"BIN={Path(sys.executable).parent}",
            "STAMP=",
            f"SCREENSHOT={picture}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert picture.read_bytes().startswith(b"\x89PNG")
    assert picture.stat().st_size > 20_000
    assert sorted(p.name for p in picture.parent.iterdir()) == ["screenshot.png"]
