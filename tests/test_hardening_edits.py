"""An edit's observation shows what changed, even when before and after start alike (item 16).

Before: both sides were cut to their first 60 characters, so an edit deep in a long line, or
below an unchanged first line, read "replaced `x` with `x`". Now the differing part is shown,
with a little context, bounded in size.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.hook_harness import run_hook
from workbench.compress.offline import OfflineCompressor
from workbench.models import ObservationDraft, ToolEvent

CWD = "/home/dev/code/acme-api"
LONG = (
    'RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})  # "transient" per RFC '
    "9110; see docs/retries.md for the reasoning, and {limit} = {n}"
)


def edit(old: str, new: str, tool: str = "Edit") -> ObservationDraft:
    path = f"{CWD}/src/acme/retry.py"
    if tool == "Edit":
        tool_input: Any = {"file_path": path, "old_string": old, "new_string": new}
    else:
        tool_input = {"file_path": path, "edits": [{"old_string": old, "new_string": new}]}
    event = ToolEvent(
        content_session_id="s",
        project="acme-api",
        tool_name=tool,
        tool_input=tool_input,
        tool_response={"filePath": path},
        cwd=CWD,
        prompt_number=1,
    )
    [draft] = OfflineCompressor().observe(event).observations
    return draft


def change_fact(draft: ObservationDraft) -> str:
    return next(f for f in draft.facts if f.startswith(("replaced", "changed")))


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit"])
def test_a_change_deep_in_a_long_line_is_shown(tool: str) -> None:
    new = LONG.replace("the reasoning", "the rationale")
    fact = change_fact(edit(LONG, new, tool))
    assert "rationale" in fact
    assert "reasoning" in fact  # the before side, around the change
    assert len(fact) <= 220


def test_a_change_below_an_unchanged_first_line_is_shown() -> None:
    old = "def backoff(attempt: int) -> float:\n    base = 2.0\n    return base * attempt\n"
    new = "def backoff(attempt: int) -> float:\n    base = 2.0\n    return base**attempt\n"
    draft = edit(old, new)
    fact = change_fact(draft)
    assert "base * attempt" in fact
    assert "base**attempt" in fact
    assert fact in draft.narrative
    assert draft.subtitle == fact


def test_the_two_sides_never_read_the_same() -> None:
    for old, new in [
        (LONG, LONG.replace("{n}", "{m}")),
        (LONG + "\n" + LONG, LONG + "\n" + LONG.replace("reasoning", "reason")),
        ("x = 1\n" * 40, "x = 1\n" * 39 + "x = 2\n"),
        ("a" * 500, "a" * 499 + "b"),
    ]:
        fact = change_fact(edit(old, new))
        assert "→" in fact, fact
        before, after = fact.split("→", 1)
        assert before.strip(" `…") != after.strip(" `…"), fact
        assert len(fact) <= 220


def test_a_different_first_line_keeps_the_short_form() -> None:
    fact = change_fact(edit("def claim(self):\n    pass", "def claim(self, n=1):\n    pass"))
    assert fact.startswith("replaced `def claim(self):`")


def test_an_edit_stored_through_the_real_pipeline_shows_the_change(
    data_dir: Path, make_service: Any
) -> None:
    payload = json.loads((FIXTURES / "hooks" / "post_tool_use_edit.json").read_text())
    payload["tool_use_id"] = "toolu_deep_change"
    payload["tool_input"]["old_string"] = LONG
    payload["tool_input"]["new_string"] = LONG.replace("504", "504, 599")
    payload["tool_response"].pop("structuredPatch", None)
    payload["tool_response"].pop("oldString", None)
    payload["tool_response"].pop("newString", None)
    svc = make_service(WORKBENCH_COMPRESSOR="offline")
    run_hook("post_tool_use", payload, svc.env).output()
    svc.wait_idle()
    conn = sqlite3.connect(data_dir / "workbench.db")
    try:
        [(facts, subtitle)] = conn.execute("SELECT facts, subtitle FROM observations").fetchall()
    finally:
        conn.close()
    assert any("599" in f for f in json.loads(facts))
    assert "599" in subtitle
