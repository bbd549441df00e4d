"""Cursor through the real hook scripts: adapter, stdout per event, spool, rules file, end to end.

Every fixture in ``tests/fixtures/hooks/cursor/`` (real-shaped, sources in its README) is fed
to the scripts ``workbench install --agent cursor`` registers for its event, each as a
subprocess run with ``--platform cursor``, the way Cursor runs the hook command. Peers are
real: nothing listening (the spool), a recording HTTP server, or the real service.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from hooks import _runtime, context_file
from hooks.adapters import cursor as cursor_adapter
from tests.agent_hooks import db_rows, run_as_agent, script_argv, spooled
from tests.conftest import FIXTURES, HOOKS_DIR, Service, base_env, free_port, http_json
from tests.hook_harness import Recorder, _stop_detached, _wait_for_health, needs_service
from workbench import locate

FOLDER = FIXTURES / "hooks" / "cursor"
# Cursor event -> the scripts registered for it, in order (workbench/agents/cursor.py).
SCRIPTS = {
    "beforeSubmitPrompt": ["user_prompt_submit", "context_file"],
    "afterShellExecution": ["post_tool_use"],
    "afterMCPExecution": ["post_tool_use"],
    "afterFileEdit": ["post_tool_use"],
    "stop": ["stop", "context_file"],
}
CAPTURE = {event: scripts[0] for event, scripts in SCRIPTS.items()}
# What Cursor reads on stdout: beforeSubmitPrompt must say continue; the rest is ignored.
STDOUT = {"beforeSubmitPrompt": {"continue": True}}
SESSION = [
    "before_submit_prompt",
    "after_mcp_execution",
    "after_file_edit",
    "after_file_edit_multi",
    "after_shell_execution",
    "stop",
]
RULES = Path(".cursor") / "rules" / "workbench-context.mdc"


def fixture_names() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.json"))


def load(name: str, workspace: Path | None = None) -> dict[str, Any]:
    payload = json.loads((FOLDER / f"{name}.json").read_text("utf-8"))
    if workspace is not None:  # a real folder, so the rules file can be written
        payload["workspace_roots"] = [str(workspace)]
        if "file_path" in payload:
            payload["file_path"] = payload["file_path"].replace(
                "/home/dev/code/acme-api", str(workspace)
            )
    return payload


def run(script: str, payload: dict[str, Any] | bytes, env: dict[str, str]) -> dict[str, Any]:
    """Run one hook script as Cursor would; assert the contract; return its one JSON object."""
    return run_as_agent(script_argv(script, "cursor"), payload, env)


def run_event(payload: dict[str, Any], env: dict[str, str]) -> list[dict[str, Any]]:
    """Every script registered for the payload's event, in order, as Cursor runs them."""
    return [run(script, payload, env) for script in SCRIPTS[payload["hook_event_name"]]]


# ----- the fixtures ---------------------------------------------------------------------------


def test_fixtures_cover_every_registered_event_and_the_readme_names_every_field() -> None:
    payloads = [load(n) for n in fixture_names()]
    assert {p["hook_event_name"] for p in payloads} == set(SCRIPTS)
    readme = (FOLDER / "README.md").read_text("utf-8")
    for payload in payloads:
        assert payload["conversation_id"]
        assert payload["workspace_roots"]
        for key in payload:
            assert f"`{key}`" in readme, key


# ----- service down: exit 0, Cursor's stdout, the spool ---------------------------------------


@pytest.mark.parametrize("name", fixture_names())
def test_every_fixture_answers_cursors_shape_and_spools_when_service_down(
    name: str, data_dir: Path
) -> None:
    payload = load(name)
    event = payload["hook_event_name"]
    assert run(CAPTURE[event], payload, base_env(data_dir, free_port())) == STDOUT.get(event, {})
    (envelope,) = spooled(data_dir)
    body = envelope.body
    assert body["contentSessionId"] == payload["conversation_id"]
    if event == "beforeSubmitPrompt":
        assert envelope.path == "/api/sessions/init"
        assert body["platformSource"] == "cursor"
        assert body["prompt"] == payload["prompt"]
        assert body["project"] == "acme-api"
    elif event == "stop":
        assert envelope.path == "/api/sessions/summarize"
        assert body["last_assistant_message"] == ""  # Cursor's stop carries no answer
    else:
        assert envelope.path == "/api/sessions/observations"
        assert body["cwd"] == "/home/dev/code/acme-api"  # the first workspace root
        assert "tool_use_id" not in body


def _observation(name: str, data_dir: Path) -> dict[str, Any]:
    run("post_tool_use", load(name), base_env(data_dir, free_port()))
    (envelope,) = spooled(data_dir)
    return envelope.body


def test_a_shell_command_becomes_claude_codes_bash(data_dir: Path) -> None:
    payload = load("after_shell_execution")
    body = _observation("after_shell_execution", data_dir)
    assert body["tool_name"] == "Bash"
    assert body["tool_input"] == {"command": payload["command"]}
    assert body["tool_response"] == payload["output"]


def test_one_file_edit_becomes_edit_and_several_multiedit(tmp_path: Path) -> None:
    one, several = load("after_file_edit"), load("after_file_edit_multi")
    body = _observation("after_file_edit", tmp_path / "a")
    (edit,) = one["edits"]
    assert body["tool_name"] == "Edit"
    assert body["tool_input"] == {"file_path": one["file_path"], **edit}
    assert body["tool_response"] == {"filePath": one["file_path"]}
    body = _observation("after_file_edit_multi", tmp_path / "b")
    assert body["tool_name"] == "MultiEdit"
    assert body["tool_input"] == {"file_path": several["file_path"], "edits": several["edits"]}


def test_an_mcp_call_keeps_its_name_with_input_and_result_parsed(data_dir: Path) -> None:
    payload = load("after_mcp_execution")
    body = _observation("after_mcp_execution", data_dir)
    assert body["tool_name"] == "get_issue"
    assert body["tool_input"] == json.loads(payload["tool_input"])
    assert body["tool_response"] == json.loads(payload["result_json"])


def test_mcp_strings_that_do_not_parse_or_hold_lone_surrogates_are_still_sent(
    data_dir: Path,
) -> None:
    payload = {
        **load("after_mcp_execution"),
        "tool_input": "{not json",
        "result_json": '{"text": "cut mid-emoji \\ud83d", "k": "<private>secret</private>ok"}',
    }
    run("post_tool_use", payload, base_env(data_dir, free_port()))
    (envelope,) = spooled(data_dir)
    assert envelope.body["tool_input"] == "{not json"
    assert envelope.body["tool_response"] == {"text": "cut mid-emoji \ufffd", "k": "ok"}


def test_bad_stdin_still_answers_a_prompt_with_continue(data_dir: Path) -> None:
    env = base_env(data_dir, free_port())
    for raw in (b"", b"not json", b"[1, 2]"):
        assert run("user_prompt_submit", raw, env) == {"continue": True}
    assert spooled(data_dir) == []


def test_prompt_context_from_the_service_is_never_printed_to_cursor(data_dir: Path) -> None:
    """Cursor has no context-injection API: a Claude-shaped answer would only be noise."""
    peer = Recorder()
    peer.replies["/api/context/prompt"] = (
        200,
        b"<workbench-context>\nrelated\n</workbench-context>",
    )
    try:
        env = base_env(data_dir, peer.port, WORKBENCH_PROMPT_INJECTION="true")
        assert run("user_prompt_submit", load("before_submit_prompt"), env) == {"continue": True}
    finally:
        peer.close()


# ----- the rules file -------------------------------------------------------------------------

CONTEXT = (
    "<workbench-context>\n# acme-api\n- Refresh tokens rejected at expiry\n</workbench-context>"
)


@pytest.mark.parametrize("name", ["before_submit_prompt", "stop"])
def test_the_rules_file_holds_the_session_start_context_and_only_it_is_written(
    name: str, tmp_path: Path, data_dir: Path
) -> None:
    workspace = tmp_path / "acme-api"
    rules = workspace / RULES.parent
    rules.mkdir(parents=True)
    (rules / "style.mdc").write_text("---\nalwaysApply: true\n---\nUse tabs.\n")
    peer = Recorder()
    peer.replies["/api/context/inject"] = (200, CONTEXT.encode())
    try:
        output = run("context_file", load(name, workspace), base_env(data_dir, peer.port))
        (ask,) = [r for r in peer.requests if r.path.startswith("/api/context/inject")]
    finally:
        peer.close()
    assert output == STDOUT.get(load(name)["hook_event_name"], {})
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(ask.path).query)
    assert query == {  # the file is read later: no ledger session; this folder's project
        "projects": ["acme-api"],
        "project_key": [locate.project_key_from_cwd(str(workspace))],
    }
    written = workspace / RULES
    assert written.read_text("utf-8") == cursor_adapter.context_document(CONTEXT)
    text = written.read_text("utf-8")
    assert text.startswith("---\n")
    assert "\nalwaysApply: true\n---\n" in text
    assert (rules / "style.mdc").read_text() == "---\nalwaysApply: true\n---\nUse tabs.\n"
    assert sorted(p.name for p in rules.iterdir()) == ["style.mdc", "workbench-context.mdc"]


def test_no_memory_or_no_service_leaves_the_rules_file_alone(tmp_path: Path) -> None:
    workspace = tmp_path / "acme-api"
    (workspace / RULES.parent).mkdir(parents=True)
    (workspace / RULES).write_text("the last memory")
    # No workbench service can run: the port answers, but not as workbench (nothing spawned).
    foreign = Recorder()
    foreign.replies["/api/health"] = (200, b'{"service": "something-else"}')
    try:
        down = base_env(tmp_path / "data", foreign.port)
        assert run("context_file", load("stop", workspace), down) == {}
    finally:
        foreign.close()
    peer = Recorder()
    peer.replies["/api/context/inject"] = (200, b"")
    try:
        env = base_env(tmp_path / "data", peer.port)
        assert run("context_file", load("stop", workspace), env) == {}
        missing = load("stop", tmp_path / "no-such-folder")
        assert run("context_file", missing, env) == {}
    finally:
        peer.close()
    assert (workspace / RULES).read_text() == "the last memory"
    assert not (tmp_path / "no-such-folder").exists()
    assert spooled(tmp_path / "data") == []


def test_other_platforms_have_no_context_file(tmp_path: Path, data_dir: Path) -> None:
    payload = json.loads((FIXTURES / "hooks" / "stop.json").read_text("utf-8"))
    payload["cwd"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(HOOKS_DIR / "context_file.py")],
        input=json.dumps(payload).encode(),
        env=base_env(data_dir, free_port()),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {}
    assert not (tmp_path / ".cursor").exists()


# ----- end to end against the real service ----------------------------------------------------


def test_a_session_end_to_end_then_the_rules_file_holds_the_next_sessions_context(
    make_service: Any, tmp_path: Path
) -> None:
    svc = make_service()
    workspace = tmp_path / "acme-api"
    workspace.mkdir()
    outputs = [run_event(load(SESSION[0], workspace), svc.env)]
    # At the first prompt there is no memory of this session yet (maybe no file at all).
    before = (workspace / RULES).read_text("utf-8") if (workspace / RULES).exists() else ""
    outputs += [run_event(load(name, workspace), svc.env) for name in SESSION[1:]]
    assert outputs[0] == [{"continue": True}, {"continue": True}]
    assert all(out == [{}] * len(out) for out in outputs[1:])
    svc.wait_idle()

    session_id = load("stop")["conversation_id"]
    (session,) = db_rows(svc, "SELECT * FROM sessions WHERE content_session_id = ?", session_id)
    assert session["platform_source"] == "cursor"
    assert session["project"] == "acme-api"
    observations = db_rows(
        svc, "SELECT * FROM observations WHERE content_session_id = ?", session_id
    )
    assert len(observations) >= 3
    assert {o["platform_source"] for o in observations} == {"cursor"}
    modified = " ".join(o["files_modified"] or "" for o in observations)
    assert "src/acme/auth.py" in modified
    assert "tests/test_auth.py" in modified
    summaries = db_rows(
        svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", session_id
    )
    assert len(summaries) == 1
    status, page = svc.get(
        "/api/search?query=auth&type=observations&format=json&platform_source=cursor"
    )
    assert status == 200, page
    found = {hit["id"] for hit in page["observations"]}
    assert found
    assert found <= {o["id"] for o in observations}

    # The next chat's first prompt refreshes the rules file Cursor reads into it.
    nxt = {**load("before_submit_prompt", workspace), "conversation_id": session_id + "-next"}
    assert run_event(nxt, svc.env) == [{"continue": True}, {"continue": True}]
    status, context = http_json("GET", svc.url + "/api/context/inject?projects=acme-api")
    assert status == 200
    assert context.startswith("<workbench-context>")
    text = (workspace / RULES).read_text("utf-8")
    assert text == cursor_adapter.context_document(context)
    assert any(o["title"] in text for o in observations)
    assert not any(o["title"] in before for o in observations)
    assert sorted(os.listdir(workspace / RULES.parent)) == ["workbench-context.mdc"]


@needs_service
def test_a_prompt_with_the_service_down_starts_it_and_nothing_is_lost(
    make_service: Any, tmp_path: Path
) -> None:
    """Cursor has no session-start event: the prompt's context_file hook spawns the service,
    which replays the prompt user_prompt_submit had to spool a moment before."""
    svc: Service = make_service(start=False)
    workspace = tmp_path / "acme-api"
    workspace.mkdir()
    payload = load("before_submit_prompt", workspace)
    try:
        assert run_event(payload, svc.env) == [{"continue": True}, {"continue": True}]
        assert _wait_for_health(svc, timeout=30)["service"] == "workbench"
        status, _ = svc.post("/api/spool/replay", {})
        assert status == 200
        rows = db_rows(
            svc,
            "SELECT platform_source FROM sessions WHERE content_session_id = ?",
            payload["conversation_id"],
        )
        assert rows == [{"platform_source": "cursor"}]
    finally:
        _stop_detached(svc, svc.data_dir)


def test_the_normalised_input_is_claude_codes(tmp_path: Path) -> None:
    """What the scripts see of a stop: the conversation, the root, no answer, no re-entry."""
    payload = {**load("stop"), "loop_count": 3, "workspace_roots": ["", 7, "/w/a", "/w/b"]}
    event = _runtime.parse_input(json.dumps(payload).encode(), "cursor")
    assert event is not None
    assert event.hook_event_name == "Stop"
    assert event.session_id == payload["conversation_id"]
    assert event.cwd == "/w/a"
    assert event.last_assistant_message == ""
    assert event.stop_hook_active is False
    assert event.platform_source == "cursor"
    assert event.answer_event("UserPromptSubmit") == "beforeSubmitPrompt"


def test_a_users_own_rules_file_of_that_name_is_never_overwritten(tmp_path: Path) -> None:
    """Only a file carrying our mark (or none at all) is ours to rewrite."""
    workspace = tmp_path / "acme-api"
    (workspace / RULES.parent).mkdir(parents=True)
    mine = "---\nalwaysApply: true\n---\nmy own notes\n"
    (workspace / RULES).write_text(mine, "utf-8")
    assert not context_file.write_context(cursor_adapter, str(workspace), CONTEXT)
    assert (workspace / RULES).read_text("utf-8") == mine
    (workspace / RULES).unlink()
    assert context_file.write_context(cursor_adapter, str(workspace), CONTEXT)
    assert context_file.write_context(cursor_adapter, str(workspace), CONTEXT + " again")
    assert (workspace / RULES).read_text("utf-8").endswith("again\n")
