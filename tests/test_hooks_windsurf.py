"""Windsurf through the real hook scripts: the adapter, the spool, the service, the rule file.

Every fixture in ``tests/fixtures/hooks/windsurf/`` (sources in its README) is fed to the real
script as a subprocess run with ``--platform windsurf``, in a real workspace folder (Windsurf
runs a hook in the workspace root, and no payload names it otherwise). Peers are real:
nothing listening (the spool), a recording HTTP server, or the real service. Windsurf reads no
hook stdout, so its memory is checked where it goes: ``.windsurf/rules/workbench-context.md``.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from hooks import _runtime, context_file
from hooks.adapters import PLATFORMS
from hooks.adapters import windsurf as adapter
from tests.agent_hooks import db_rows, run_as_agent, script_argv, spooled
from tests.conftest import FIXTURES, base_env, free_port
from tests.hook_harness import Recorder
from workbench import locate
from workbench.platforms import PLATFORM_SOURCES

HERE = FIXTURES / "hooks" / "windsurf"
SCRIPT_FOR_ACTION = {
    "pre_user_prompt": "user_prompt_submit",
    "post_read_code": "post_tool_use",
    "post_write_code": "post_tool_use",
    "post_run_command": "post_tool_use",
    "post_mcp_tool_use": "post_tool_use",
    "post_cascade_response": "stop",
}
# One Cascade conversation, in the order Windsurf fires the events.
SESSION = [
    "pre_user_prompt",
    "post_read_code",
    "post_write_code",
    "post_write_code_new_file",
    "post_run_command",
    "post_mcp_tool_use",
    "post_cascade_response",
]
# What each post_* fixture becomes: Claude Code's tool with the same parameters.
TOOL = {
    "post_read_code": "Read",
    "post_write_code": "Edit",
    "post_write_code_new_file": "Write",
    "post_run_command": "Bash",
    "post_mcp_tool_use": "mcp__github__list_commits",
}
RULE = Path(adapter.CONTEXT_FILE)


def names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.json"))


def load(name: str) -> dict[str, Any]:
    return json.loads((HERE / f"{name}.json").read_text("utf-8"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The workspace root Windsurf runs its hooks in (named like the fixtures' project)."""
    folder = tmp_path / "code" / "acme-api"
    folder.mkdir(parents=True)
    return folder


def run(
    payload: dict[str, Any], env: dict[str, str], cwd: Path, script: str | None = None
) -> dict[str, Any]:
    """Run the hook for ``payload`` as Windsurf would; assert the contract; return its JSON."""
    script = script or SCRIPT_FOR_ACTION[payload["agent_action_name"]]
    return run_as_agent(script_argv(script, "windsurf"), payload, env, cwd)


# ----- the adapter ----------------------------------------------------------------------------


def test_windsurf_is_a_registered_platform() -> None:
    assert "windsurf" in PLATFORMS
    assert PLATFORM_SOURCES[adapter.PLATFORM_SOURCE] == "windsurf"


def test_fixtures_cover_every_registered_event() -> None:
    actions = {load(n)["agent_action_name"] for n in names()}
    assert actions == set(SCRIPT_FOR_ACTION)
    assert set(names()) == set(SESSION)
    assert (HERE / "README.md").is_file()


@pytest.mark.parametrize("name", SESSION)
def test_every_fixture_normalises_to_claude_codes_shape(name: str, workspace: Path) -> None:
    payload = load(name)
    info = payload["tool_info"]
    event = _runtime.parse_input(json.dumps(payload).encode(), "windsurf")
    assert event is not None
    assert event.session_id == payload["trajectory_id"]
    assert event.platform_source == "windsurf"
    assert event.cwd == info.get("cwd", str(Path.cwd()))
    if name == "pre_user_prompt":
        assert event.hook_event_name == "UserPromptSubmit"
        assert (event.prompt, event.prompt_given) == (info["user_prompt"], True)
    elif name == "post_cascade_response":
        assert event.hook_event_name == "Stop"
        assert event.last_assistant_message == info["response"]
    else:
        assert event.hook_event_name == "PostToolUse"
        assert event.tool_name == TOOL[name]
    if name == "post_write_code":
        (edit,) = info["edits"]
        assert event.tool_input == {"file_path": info["file_path"], **edit}
    if name == "post_write_code_new_file":
        content = info["edits"][0]["new_string"]
        assert event.tool_input == {"file_path": info["file_path"], "content": content}
    if name == "post_run_command":
        assert event.tool_input == {"command": info["command_line"]}
    if name == "post_mcp_tool_use":
        assert (event.tool_input, event.tool_response) == (
            info["mcp_tool_arguments"],
            info["mcp_result"],
        )


def test_several_edits_are_a_multiedit() -> None:
    edits = [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]
    payload = {**load("post_write_code"), "tool_info": {"file_path": "/w/x.py", "edits": edits}}
    event = _runtime.parse_input(json.dumps(payload).encode(), "windsurf")
    assert event is not None
    assert (event.tool_name, event.tool_input) == (
        "MultiEdit",
        {"file_path": "/w/x.py", "edits": edits},
    )


def test_a_private_prompt_is_still_a_prompt() -> None:
    payload = load("pre_user_prompt")
    payload["tool_info"]["user_prompt"] = "<private>the staging password is hunter2</private>"
    event = _runtime.parse_input(json.dumps(payload).encode(), "windsurf")
    assert event is not None
    assert (event.prompt, event.prompt_given) == ("", True)


# ----- service down: exit 0, one JSON line, the spool -----------------------------------------


@pytest.mark.parametrize("name", SESSION)
def test_every_fixture_exits_0_prints_one_object_and_spools_when_service_down(
    name: str, data_dir: Path, workspace: Path
) -> None:
    payload = load(name)
    assert run(payload, base_env(data_dir, free_port()), workspace) == {}
    (envelope,) = spooled(data_dir)
    body = envelope.body
    assert body["contentSessionId"] == payload["trajectory_id"]
    info = payload["tool_info"]
    if envelope.path == "/api/sessions/init":
        assert body["platformSource"] == "windsurf"
        assert body["prompt"] == info["user_prompt"]
        assert body["project"] == "acme-api"
    elif envelope.path == "/api/sessions/summarize":
        assert body["last_assistant_message"] == info["response"]
    else:
        assert envelope.path == "/api/sessions/observations"
        assert body["tool_name"] == TOOL[name]
        assert body["cwd"] == info.get("cwd", str(workspace))


def test_prompt_injection_on_makes_no_context_request(data_dir: Path, workspace: Path) -> None:
    """Windsurf reads no hook stdout, and pre_user_prompt blocks the prompt while it runs."""
    peer = Recorder()
    peer.replies["/api/context/prompt"] = (200, b"<workbench-context>x</workbench-context>")
    try:
        env = base_env(data_dir, peer.port, WORKBENCH_PROMPT_INJECTION="true")
        assert run(load("pre_user_prompt"), env, workspace) == {}
        paths = [(r.method, r.path.split("?")[0]) for r in peer.requests]
    finally:
        peer.close()
    assert paths == [("POST", "/api/sessions/init")]


# ----- the memory: a workspace rule, refreshed at each response --------------------------------


def test_the_response_hook_writes_the_context_rule(data_dir: Path, workspace: Path) -> None:
    peer = Recorder()
    block = "<workbench-context>\n# acme-api: recent work\n- revoked refresh tokens\n"
    peer.replies["/api/context/inject"] = (200, (block + "</workbench-context>").encode())
    try:
        out = run(
            load("post_cascade_response"),
            base_env(data_dir, peer.port),
            workspace,
            script="context_file",
        )
        asked = [r.path for r in peer.requests if r.path.startswith("/api/context/inject")]
    finally:
        peer.close()
    assert out == {}  # Windsurf reads no stdout
    key = urllib.parse.quote(locate.project_key_from_cwd(str(workspace)), safe="")
    assert asked == [  # the rule is read later: no ledger session; this folder's project
        f"/api/context/inject?projects=acme-api&project_key={key}"
    ]
    text = (workspace / RULE).read_text("utf-8")
    assert text.startswith("---\ntrigger: always_on\n---\n")
    assert block + "</workbench-context>\n" in text
    assert list((workspace / RULE).parent.iterdir()) == [workspace / RULE]  # no temp file left


def test_no_memory_writes_no_rule(data_dir: Path, workspace: Path) -> None:
    peer = Recorder()  # /api/context/inject answers 404: no context
    try:
        out = run(
            load("post_cascade_response"),
            base_env(data_dir, peer.port),
            workspace,
            script="context_file",
        )
    finally:
        peer.close()
    assert out == {}
    assert not (workspace / ".windsurf").exists()


def test_a_users_own_rule_of_that_name_is_never_overwritten(workspace: Path) -> None:
    path = workspace / RULE
    path.parent.mkdir(parents=True)
    path.write_text("---\ntrigger: manual\n---\nmine\n", "utf-8")
    context_file.write_context(
        adapter, str(workspace), "<workbench-context>new</workbench-context>"
    )
    assert path.read_text("utf-8") == "---\ntrigger: manual\n---\nmine\n"


def test_our_rule_is_rewritten_and_cut_to_windsurfs_limit(workspace: Path) -> None:
    context_file.write_context(adapter, str(workspace), "first")
    context_file.write_context(adapter, str(workspace), "x" * 50_000)
    text = (workspace / RULE).read_text("utf-8")
    assert "first" not in text
    assert len(text) <= adapter.MAX_RULE_CHARS
    assert text.rstrip().endswith(adapter.CUT_NOTE.strip())


@pytest.mark.parametrize("cwd", ["", "relative", "/no/such/folder/anywhere"])
def test_no_rule_without_a_real_workspace(
    cwd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "relative").mkdir()
    context_file.write_context(adapter, cwd, "<workbench-context>x</workbench-context>")
    assert list(tmp_path.rglob(".windsurf")) == []


# ----- end to end against the real service ----------------------------------------------------


def test_a_conversation_end_to_end_then_the_rule_carries_its_memory(
    make_service: Any, workspace: Path
) -> None:
    svc = make_service()
    response = load("post_cascade_response")
    assert run(response, svc.env, workspace, script="context_file") == {}
    rule = workspace / RULE
    before = rule.read_text("utf-8") if rule.exists() else ""  # nothing remembered yet
    for name in SESSION:
        assert run(load(name), svc.env, workspace) == {}
    svc.wait_idle()
    trajectory = response["trajectory_id"]
    (session,) = db_rows(svc, "SELECT * FROM sessions WHERE content_session_id = ?", trajectory)
    assert (session["platform_source"], session["project"]) == ("windsurf", "acme-api")
    observations = db_rows(
        svc, "SELECT * FROM observations WHERE content_session_id = ?", trajectory
    )
    assert observations
    assert {o["platform_source"] for o in observations} == {"windsurf"}
    summaries = db_rows(
        svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", trajectory
    )
    assert len(summaries) == 1
    # The response hook of the next conversation in this workspace refreshes the rule, which
    # Cascade reads from its next prompt on.
    nxt = {**response, "trajectory_id": trajectory + "-next"}
    assert run(nxt, svc.env, workspace, script="context_file") == {}
    text = (workspace / RULE).read_text("utf-8")
    assert text.startswith("---\ntrigger: always_on\n---\n")
    assert "<workbench-context>" in text
    assert any(o["title"] in text for o in observations)
    assert not any(o["title"] in before for o in observations)
