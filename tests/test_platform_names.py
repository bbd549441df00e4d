"""The platforms users may filter on are named from ``workbench.platforms``, not a copy.

A help text that lists them by hand goes stale when an agent is added (it missed OpenCode).
"""

from __future__ import annotations

import os

from tests.conftest import run_workbench
from workbench.platforms import PLATFORM_SOURCES


def test_search_help_names_every_platform_source() -> None:
    env = {**os.environ, "COLUMNS": "300"}
    text = run_workbench(env, "search", "--help").stdout
    for source in PLATFORM_SOURCES:
        assert source in text, source
