"""The README's staleness section is true (issue 22, item 5): the names it gives exist.

The setting and its default, the command and its options, the DuckDB views, the marks the
context blocks and the compact search lines print, the fields the API answers.
"""

from __future__ import annotations

from tests.conftest import ROOT, base_env, free_port, run_workbench
from workbench.api_models.observations import ObservationView
from workbench.recall.compact import stale_note
from workbench.recall.context import STALE_MARK
from workbench.recall.hits import SearchHit
from workbench.settings import Settings
from workbench.store.duck import VIEWS

README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## Memory that knows when the code moved on", 1)[1].split("\n## ", 1)[0]


def test_the_setting_the_marks_and_the_fields_are_the_real_ones() -> None:
    assert "`context_skip_stale`" in SECTION
    assert Settings.model_fields["context_skip_stale"].default is False
    assert "| `context_skip_stale` | `false` |" in README
    assert f"`{STALE_MARK}`" in SECTION
    assert f"`{stale_note(['src/app.py']).strip()}`" in SECTION
    for model in (ObservationView, SearchHit):
        assert {"stale", "stale_files"} <= set(model.model_fields)
    assert "`evidence`" in SECTION
    assert "`staleness`" in SECTION
    assert {"evidence", "staleness"} <= set(VIEWS)


def test_the_command_and_its_options_exist(tmp_path: object) -> None:
    assert "`workbench stale [--project P] [--commits] [--json]`" in SECTION
    env = base_env(ROOT / "no-data-dir-needed-for-help", free_port())
    done = run_workbench(env, "stale", "--help")
    assert done.returncode == 0, done.stderr
    for option in ("--project", "--commits", "--json", "--limit"):
        assert option in done.stdout
