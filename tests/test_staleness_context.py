"""Stale marks where memory is injected (issue 22, item 5): SessionStart and file history.

A real git repository in tmp_path, a real service, and the real hooks as subprocesses: the
SessionStart block (from the service, and from the store when the service does not answer)
marks an observation whose cited file changed since, and leaves it out with
``context_skip_stale``; the Read hook's file history marks an older observation of the file
that a later change made stale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service
from tests.hook_harness import run_hook
from tests.test_hooks_cold_start import silent_port
from tests.test_staleness import (
    commit_all,
    make_repo,
    read_call,
    record,
    stale_and_fresh,
    start_session,
)
from workbench.recall.context import STALE_LEGEND, STALE_MARK


def session_start(env: dict[str, str], cwd: Path) -> str:
    payload = {
        "hook_event_name": "SessionStart",
        "session_id": "st-next",
        "cwd": str(cwd),
        "source": "startup",
        "transcript_path": "",
    }
    output = run_hook("session_start", payload, env).output()
    assert output, output
    text: str = output["hookSpecificOutput"]["additionalContext"]
    return text


def row_of(block: str, obs_id: int) -> str | None:
    return next((ln for ln in block.splitlines() if ln.startswith(f"#{obs_id} ")), None)


def test_session_start_marks_a_stale_observation(tmp_path: Path, service: Service) -> None:
    repo, stale, fresh = stale_and_fresh(tmp_path, service)
    block = session_start(service.env, repo)
    assert STALE_LEGEND in block
    assert (row_of(block, stale) or "").endswith(STALE_MARK)
    fresh_row = row_of(block, fresh)
    assert fresh_row is not None
    assert STALE_MARK not in fresh_row


def test_context_skip_stale_leaves_stale_ones_out(tmp_path: Path, make_service: Any) -> None:
    svc = make_service(WORKBENCH_CONTEXT_SKIP_STALE="true")
    repo, stale, fresh = stale_and_fresh(tmp_path, svc)
    block = session_start(svc.env, repo)
    assert row_of(block, stale) is None
    assert row_of(block, fresh) is not None
    assert STALE_LEGEND not in block


@pytest.mark.slow
def test_the_cold_block_from_the_store_marks_and_skips_the_same(
    tmp_path: Path, service: Service
) -> None:
    repo, stale, fresh = stale_and_fresh(tmp_path, service)
    service.stop()
    with silent_port() as port:  # the service does not answer: the hook reads the store
        env = {**service.env, "WORKBENCH_PORT": str(port)}
        block = session_start(env, repo)
        skipping = session_start({**env, "WORKBENCH_CONTEXT_SKIP_STALE": "1"}, repo)
    assert (row_of(block, stale) or "").endswith(STALE_MARK)
    assert STALE_MARK not in (row_of(block, fresh) or STALE_MARK)
    assert row_of(skipping, stale) is None
    assert row_of(skipping, fresh) is not None


def file_history(env: dict[str, str], path: Path, cwd: Path) -> str:
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "st-read",
        "cwd": str(cwd),
        "tool_name": "Read",
        "tool_input": {"file_path": str(path)},
    }
    output = run_hook("pre_tool_use_read", payload, env).output()
    assert output is not None
    if output == {}:
        return ""
    text: str = output["hookSpecificOutput"]["additionalContext"]
    return text


def read_before_and_after_a_change(tmp_path: Path, svc: Service) -> tuple[Path, int, int]:
    """``lib.py`` read in session ``st-old``, changed and committed, read again in ``st-new``:
    the older memory is stale, the newer one is not."""
    repo = make_repo(tmp_path, {"lib.py": "A = 1\n"})
    start_session(svc, repo, "st-old")
    (old,) = record(svc, read_call(repo, "lib.py", 1, session="st-old"))
    (repo / "lib.py").write_text("A = 2\n")
    commit_all(repo, "a is 2")
    start_session(svc, repo, "st-new")
    (new,) = record(svc, read_call(repo, "lib.py", 2, session="st-new"))
    return repo, old, new


def test_file_history_marks_an_older_observation_a_later_change_made_stale(
    tmp_path: Path, make_service: Any
) -> None:
    svc = make_service(WORKBENCH_FILE_CONTEXT_MIN_BYTES="0")
    repo, old, new = read_before_and_after_a_change(tmp_path, svc)
    history = file_history(svc.env, repo / "lib.py", repo)
    lines = {ln.split()[1]: ln for ln in history.splitlines() if ln.startswith("- #")}
    assert lines[f"#{old}"].endswith(STALE_MARK)
    assert STALE_MARK not in lines[f"#{new}"]


def test_file_history_skip_stale_leaves_the_older_one_out(
    tmp_path: Path, make_service: Any
) -> None:
    svc = make_service(WORKBENCH_FILE_CONTEXT_MIN_BYTES="0", WORKBENCH_CONTEXT_SKIP_STALE="1")
    repo, old, new = read_before_and_after_a_change(tmp_path, svc)
    history = file_history(svc.env, repo / "lib.py", repo)
    assert f"#{new} " in history
    assert f"#{old} " not in history
