"""The rules-file context writer (hooks/context_file.py) against hostile workspaces (review).

Cursor and Windsurf read a rules file from the project; the project is whatever the user
cloned, so it may hold symlinks, a FIFO or a rule of ours by name that is theirs. Found in
review, each failing before: the service was never started nor the spool replayed when the
file could not be written; the temp file and the folders were followed through symlinks
(writing outside the workspace); a FIFO hung the prompt hook; a user's symlinked rule was
replaced. Real hook subprocesses where the hook's output matters; the writer in-process where
only the file system does.
"""

from __future__ import annotations

import os
from pathlib import Path

from hooks import context_file
from hooks.adapters import cursor as cursor_adapter
from tests.conftest import base_env
from tests.hook_harness import Recorder
from tests.test_hooks_cursor import CONTEXT, RULES, load, run


def test_a_users_own_rule_still_gets_the_service_started_and_the_spool_replayed(
    tmp_path: Path, data_dir: Path
) -> None:
    workspace = tmp_path / "acme-api"
    (workspace / RULES.parent).mkdir(parents=True)
    (workspace / RULES).write_text("---\nalwaysApply: true\n---\nmine\n", "utf-8")
    peer = Recorder()
    peer.replies["/api/context/inject"] = (200, CONTEXT.encode())
    try:
        out = run(
            "context_file", load("before_submit_prompt", workspace), base_env(data_dir, peer.port)
        )
        asked = [(r.method, r.path.split("?")[0]) for r in peer.requests]
    finally:
        peer.close()
    assert out == {"continue": True}
    assert ("POST", "/api/spool/replay") in asked  # Cursor has no other hook that does it
    assert (workspace / RULES).read_text("utf-8") == "---\nalwaysApply: true\n---\nmine\n"


def test_the_temp_file_is_never_followed_through_a_symlink(tmp_path: Path) -> None:
    workspace = tmp_path / "acme-api"
    rules = workspace / RULES.parent
    rules.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file", "utf-8")
    tmp_name = f".{RULES.name}.{os.getpid()}.tmp"
    (rules / tmp_name).symlink_to(victim)
    assert context_file.write_context(cursor_adapter, str(workspace), CONTEXT)
    assert victim.read_text("utf-8") == "the user's own file"
    assert (workspace / RULES).read_text("utf-8") == cursor_adapter.context_document(CONTEXT)


def test_a_symlinked_folder_leading_outside_the_workspace_is_not_written_through(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "acme-api"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".cursor").symlink_to(outside)  # e.g. committed to the repo
    assert not context_file.write_context(cursor_adapter, str(workspace), CONTEXT)
    assert list(outside.rglob("*")) == []


def test_a_fifo_at_the_rules_path_does_not_hang_the_prompt_hook(
    tmp_path: Path, data_dir: Path
) -> None:
    workspace = tmp_path / "acme-api"
    (workspace / RULES.parent).mkdir(parents=True)
    os.mkfifo(workspace / RULES)
    peer = Recorder()
    peer.replies["/api/context/inject"] = (200, CONTEXT.encode())
    try:
        # run() has a timeout and asserts exit 0 with one JSON line: a hang fails it.
        out = run(
            "context_file", load("before_submit_prompt", workspace), base_env(data_dir, peer.port)
        )
    finally:
        peer.close()
    assert out == {"continue": True}
    assert (workspace / RULES).is_fifo()  # not ours: left alone


def test_a_users_symlinked_rule_of_that_name_is_left_alone(tmp_path: Path) -> None:
    workspace = tmp_path / "acme-api"
    (workspace / RULES.parent).mkdir(parents=True)
    shared = tmp_path / "team-rules.mdc"
    shared.write_text("---\nalwaysApply: true\n---\nteam rules\n", "utf-8")
    (workspace / RULES).symlink_to(shared)
    assert not context_file.write_context(cursor_adapter, str(workspace), CONTEXT)
    assert (workspace / RULES).is_symlink()
    assert shared.read_text("utf-8") == "---\nalwaysApply: true\n---\nteam rules\n"


# ----- issue 19, item 12: a user's rule that quotes our marker text is theirs ----------------


def quoting_rules() -> list[str]:
    """Rules a user wrote that mention our marker, none of them a file we wrote."""
    from hooks.adapters import windsurf as windsurf_adapter

    cursor_mark, windsurf_mark = cursor_adapter.CONTEXT_MARK, windsurf_adapter.CONTEXT_MARK
    return [
        f"---\nalwaysApply: true\n---\nNever edit the block marked '{cursor_mark}'.\n",
        f"# my notes\n{cursor_adapter.CONTEXT_HEADER}mine\n",  # our header, not at the top
        f"---\ndescription: {cursor_mark}\n---\nmine, written to look like theirs\n",
        f"---\ntrigger: always_on\n---\nquote: {windsurf_mark}\n",
        f"{windsurf_mark}\nmine\n",
    ]


def test_a_users_rule_quoting_our_marker_is_never_overwritten(tmp_path: Path) -> None:
    from hooks.adapters import windsurf as windsurf_adapter

    for n, text in enumerate(quoting_rules()):
        for adapter in (cursor_adapter, windsurf_adapter):
            workspace = tmp_path / f"ws-{n}-{adapter.PLATFORM_SOURCE}"
            rules = workspace / adapter.CONTEXT_FILE
            rules.parent.mkdir(parents=True)
            rules.write_text(text, "utf-8")
            assert not context_file.write_context(adapter, str(workspace), CONTEXT), text
            assert rules.read_text("utf-8") == text


def test_a_rule_we_wrote_is_still_refreshed(tmp_path: Path) -> None:
    from hooks.adapters import windsurf as windsurf_adapter

    for adapter in (cursor_adapter, windsurf_adapter):
        workspace = tmp_path / f"ws-{adapter.PLATFORM_SOURCE}"
        rules = workspace / adapter.CONTEXT_FILE
        rules.parent.mkdir(parents=True)
        rules.write_text(adapter.context_document("older memory"), "utf-8")
        assert context_file.write_context(adapter, str(workspace), CONTEXT)
        assert rules.read_text("utf-8") == adapter.context_document(CONTEXT)
