"""Smaller defects the review of issue 12 suspected, each shown first.

Real parts: the session's PostgreSQL as the catalog, ``workbench publish`` / ``search --team``
/ ``show`` as CLI runs, forget through the library behind its route.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import forget, init, machine, seed

pytestmark = pytest.mark.slow


def test_an_author_id_with_a_trailing_newline_is_refused() -> None:
    from workbench.sections.team import check_author

    with pytest.raises(ValueError, match="author"):
        check_author("ana\n")


def test_show_of_your_own_forgotten_ref_finds_nothing(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    forgotten, kept = seed(ana.data_dir, "api", "a1", ["zanzibar secret", "zanzibar other"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    assert ana.run("team", "refresh").returncode == 0
    forget(ana.data_dir, forgotten)

    shown = ana.run("show", f"team:ana:{forgotten}", "--json")

    assert shown.returncode == 1
    assert f"not found: team:ana:{forgotten}" in shown.stderr
    assert "secret" not in shown.stdout
