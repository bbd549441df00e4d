"""OpenCode: the real plugin (``hooks/opencode/workbench.js``) in real node, end to end.

``tests/opencode_harness.mjs`` stands in for OpenCode only: it builds the ``PluginInput``
OpenCode passes, loads the plugin the way OpenCode does, and calls its hooks with the
real-shaped calls in ``tests/fixtures/hooks/opencode/`` (sources in the README). Everything
behind the plugin is real: the hook scripts as subprocesses, and the real service
(``make_service``), a recording HTTP peer, or nothing listening.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.agent_hooks import db_rows, spooled
from tests.conftest import FIXTURES, ROOT, base_env, free_port
from tests.hook_harness import Recorder

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (the plugin's host)")

PLUGIN = ROOT / "hooks" / "opencode" / "workbench.js"
HARNESS = ROOT / "tests" / "opencode_harness.mjs"
FOLDER = FIXTURES / "hooks" / "opencode"
DIRECTORY = "/home/dev/code/acme-api"
SESSION_ID = "ses_52a1c93e4ffeXk0Rk3v9QmZ2bT"
# What OpenCode calls between the session's start and its prompt's end, in order.
TURN = [
    "tool_before_read",
    "tool_after_read",
    "tool_before_edit",
    "tool_after_edit",
    "tool_after_bash",
    "tool_after_mcp",
    "message_updated_assistant",
    "message_part_updated_text",
    "session_idle",
]
SESSION = ["session_created", "chat_message", *TURN, "system_transform", "session_deleted"]
HOOKS = {
    "event",
    "chat.message",
    "tool.execute.before",
    "tool.execute.after",
    "experimental.chat.system.transform",
}


def load(name: str) -> dict[str, Any]:
    return json.loads((FOLDER / f"{name}.json").read_text("utf-8"))


def renamed(step: dict[str, Any], session_id: str) -> dict[str, Any]:
    """``step`` with the fixtures' session id replaced by ``session_id`` everywhere."""
    return json.loads(json.dumps(step).replace(SESSION_ID, session_id))


def run_plugin(
    steps: list[dict[str, Any]], env: dict[str, str], plugin: Path = PLUGIN
) -> list[dict[str, Any]]:
    """Run ``steps`` through the plugin in node; assert no hook threw; the outputs, in order."""
    proc = subprocess.run(
        [NODE or "node", str(HARNESS), str(plugin), DIRECTORY],
        input=json.dumps(steps).encode("utf-8"),
        env={**env, "WORKBENCH_PYTHON": env.get("WORKBENCH_PYTHON", _python())},
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    results = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert len(results) == len(steps), proc.stdout
    for result in results:
        assert "error" not in result, result
    return [r["output"] for r in results]


def _python() -> str:
    import sys

    return sys.executable


def test_the_fixtures_are_opencode_hook_calls_with_a_readme() -> None:
    names = sorted(p.stem for p in FOLDER.glob("*.json"))
    assert sorted(set(SESSION)) == names
    for name in names:
        step = load(name)
        assert step["hook"] in HOOKS, name
        if step["hook"] == "event":
            assert isinstance(step["input"]["event"]["properties"], dict)
        else:
            assert step["input"]["sessionID"] == SESSION_ID
    assert (FOLDER / "README.md").is_file()


@pytest.mark.slow
def test_a_session_end_to_end_then_the_next_session_gets_its_context(make_service: Any) -> None:
    svc = make_service()
    outputs = run_plugin([load(n) for n in SESSION], svc.env)
    before = "\n".join(outputs[SESSION.index("system_transform")]["system"])
    svc.wait_idle()
    (session,) = db_rows(svc, "SELECT * FROM sessions WHERE content_session_id = ?", SESSION_ID)
    assert session["platform_source"] == "opencode"
    assert session["project"] == "acme-api"
    observations = db_rows(
        svc, "SELECT * FROM observations WHERE content_session_id = ?", SESSION_ID
    )
    assert len(observations) == 4
    assert {o["platform_source"] for o in observations} == {"opencode"}
    # An MCP tool's result ({content, isError}, no `output`) is what its observation says.
    (mcp,) = [o for o in observations if "notes_lookup" in o["title"]]
    assert "the refresh token lives 14 days" in mcp["narrative"]
    # OpenCode's read/edit, mapped to Claude Code's tools, give the compressor its file lists.
    assert any("src/acme/auth.py" in o["files_read"] for o in observations)
    assert any("src/acme/auth.py" in o["files_modified"] for o in observations)
    summaries = db_rows(
        svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", SESSION_ID
    )
    assert len(summaries) == 1
    # The next session of the project: the memory lands in its system prompt.
    nxt = SESSION_ID + "next"
    start, ask = renamed(load("session_created"), nxt), renamed(load("system_transform"), nxt)
    _, output = run_plugin([start, ask], svc.env)
    system = output["system"]
    assert system[0] == load("system_transform")["output"]["system"][0]  # OpenCode's own kept
    (context,) = system[1:]
    assert context.startswith("<workbench-context>")
    assert any(o["title"] in context for o in observations)
    assert not any(o["title"] in before for o in observations)


@pytest.mark.slow
def test_a_down_service_loses_nothing_the_events_wait_in_the_spool(make_service: Any) -> None:
    svc = make_service()
    run_plugin([load("session_created"), load("chat_message")], svc.env)
    svc.wait_idle()
    svc.kill9()
    # A new OpenCode process (the plugin has no memory of the session) while the service is down.
    run_plugin([load(n) for n in TURN], svc.env)
    envelopes = spooled(svc.data_dir)
    assert [e.path for e in envelopes] == [
        *["/api/sessions/observations"] * 4,
        "/api/sessions/summarize",
    ]
    tools = [e.body for e in envelopes[:4]]
    assert [b["tool_name"] for b in tools] == ["Read", "Edit", "Bash", "notes_lookup"]
    assert tools[1]["tool_input"]["old_string"].endswith('return token["sub"]')
    assert envelopes[4].body["last_assistant_message"].startswith("Fixed: check_refresh")
    # The service comes back: it replays the spool, and the turn is stored.
    back = make_service(port=svc.port)
    deadline = time.monotonic() + 20
    while spooled(back.data_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    back.wait_idle()
    observations = db_rows(
        back, "SELECT * FROM observations WHERE content_session_id = ?", SESSION_ID
    )
    assert len(observations) == 4
    summaries = db_rows(
        back, "SELECT * FROM session_summaries WHERE content_session_id = ?", SESSION_ID
    )
    assert len(summaries) == 1


def test_what_the_plugin_posts_in_claude_codes_words(data_dir: Path) -> None:
    peer = Recorder()
    block = b"<workbench-context>\nrelated\n</workbench-context>"
    peer.replies["/api/context/inject"] = (200, b"<workbench-context>\nstart\n</workbench-context>")
    peer.replies["/api/context/prompt"] = (200, block)
    try:
        env = base_env(data_dir, peer.port, WORKBENCH_PROMPT_INJECTION="true")
        outputs = run_plugin([load(n) for n in SESSION], env)
    finally:
        peer.close()
    (init,) = [r.json() for r in peer.to("/api/sessions/init")]
    assert init["platformSource"] == "opencode"
    assert init["contentSessionId"] == SESSION_ID
    assert init["project"] == "acme-api"
    # The typed text only: the attached file part is not the prompt.
    assert init["prompt"] == load("chat_message")["output"]["parts"][0]["text"]
    read, edit, bash, mcp = [r.json() for r in peer.to("/api/sessions/observations")]
    assert read["tool_name"] == "Read"
    assert read["tool_input"] == {"file_path": f"{DIRECTORY}/src/acme/auth.py"}
    assert read["tool_response"] == load("tool_after_read")["output"]["output"]
    assert read["tool_use_id"] == "toolu_01HgK7d3RzQ4bWm9xYt2pLs8"
    assert read["cwd"] == DIRECTORY
    # tool.execute.after without args (older OpenCode): the args seen before the call.
    assert edit["tool_name"] == "Edit"
    assert set(edit["tool_input"]) == {"file_path", "old_string", "new_string"}
    assert bash["tool_name"] == "Bash"
    assert bash["tool_input"]["command"] == "python -m pytest tests/test_auth.py -q"
    # An MCP tool's result has no `output`: its text content and isError are the response
    # (issue 20 item 13; the image block's base64 data is no memory).
    assert mcp["tool_name"] == "notes_lookup"
    assert mcp["tool_input"] == {"topic": "refresh tokens"}
    text = "Notes on refresh tokens: the refresh token lives 14 days."
    assert mcp["tool_response"] == {"content": [{"type": "text", "text": text}], "isError": False}
    (summary,) = [r.json() for r in peer.to("/api/sessions/summarize")]
    part = load("message_part_updated_text")["input"]["event"]["properties"]["part"]
    assert summary == {"contentSessionId": SESSION_ID, "last_assistant_message": part["text"]}
    (end,) = [r.json() for r in peer.to("/api/sessions/end")]
    assert end == {"contentSessionId": SESSION_ID, "reason": "deleted"}
    # Both contexts reach the system prompt: the session's, then the prompt's.
    system = outputs[SESSION.index("system_transform")]["system"]
    assert system[1:] == ["<workbench-context>\nstart\n</workbench-context>", block.decode()]


def test_a_session_met_at_its_prompt_is_given_the_whole_memory(data_dir: Path) -> None:
    """Found with the real OpenCode (``opencode run --continue``, tests/test_real_opencode.py):
    OpenCode builds the system prompt afresh for every model request, so a session the plugin
    first meets at its prompt (resumed in a new process) carries no earlier block. Asking as
    a ``resume`` got only what was new since that block: nothing, and no memory at all."""
    peer = Recorder()
    block = "<workbench-context>\nstart\n</workbench-context>"
    peer.replies["/api/context/inject"] = (200, block.encode())
    try:
        steps = [load("chat_message"), load("system_transform")]
        outputs = run_plugin(steps, base_env(data_dir, peer.port))
    finally:
        peer.close()
    (inject,) = peer.to("/api/context/inject")
    assert parse_qs(urlsplit(inject.path).query)["source"] == ["startup"]
    assert outputs[1]["system"][1:] == [block]


def test_a_subagents_tool_calls_count_for_the_parent_session(data_dir: Path) -> None:
    child = "ses_52a1d0aa1ffeC7hGq2mW9tYx4k"
    created = renamed(load("session_created"), child)
    created["input"]["event"]["properties"]["info"]["parentID"] = SESSION_ID
    steps = [
        load("session_created"),
        load("chat_message"),
        created,
        renamed(load("chat_message"), child),  # the task prompt: not the user's
        renamed(load("tool_after_bash"), child),
        renamed(load("session_idle"), child),  # the subagent's answer goes to its parent
    ]
    peer = Recorder()
    try:
        run_plugin(steps, base_env(data_dir, peer.port))
    finally:
        peer.close()
    assert [r.json()["contentSessionId"] for r in peer.to("/api/sessions/init")] == [SESSION_ID]
    (call,) = [r.json() for r in peer.to("/api/sessions/observations")]
    assert call["contentSessionId"] == SESSION_ID
    assert call["agentId"] == child
    assert peer.to("/api/sessions/summarize") == []


def test_no_input_makes_the_plugin_throw_into_opencode(data_dir: Path) -> None:
    """Odd calls, a missing interpreter: every hook returns, OpenCode's output is untouched."""
    odd = [
        {"hook": "event", "input": {}},
        {"hook": "event", "input": {"event": None}},
        {"hook": "event", "input": {"event": {"type": "session.idle"}}},
        {"hook": "event", "input": {"event": {"type": "session.created", "properties": 7}}},
        {"hook": "chat.message", "input": None, "output": None},
        {"hook": "chat.message", "input": {"sessionID": 3}, "output": {"parts": "x"}},
        {"hook": "tool.execute.after", "input": {"sessionID": "s", "tool": 1}, "output": None},
        {"hook": "experimental.chat.system.transform", "input": {}, "output": {"system": "x"}},
        {"hook": "experimental.chat.system.transform", "input": {"sessionID": "s"}},
    ]
    env = base_env(data_dir, free_port(), WORKBENCH_PYTHON=str(data_dir / "no-such-python"))
    steps = [*odd, *(load(n) for n in SESSION)]
    outputs = run_plugin(steps, env)
    assert (
        outputs[len(odd) + SESSION.index("system_transform")] == load("system_transform")["output"]
    )
    assert not (data_dir / "spool").exists()


def test_a_multiedits_edits_take_claude_codes_names_so_the_edit_rule_reads_them() -> None:
    """Found in review: only the top-level keys were renamed, so MultiEdit lost every edit."""
    from hooks.adapters import opencode as opencode_adapter
    from workbench.compress.offline import OfflineCompressor
    from workbench.models import ToolEvent

    args = {
        "filePath": "/w/a.py",
        "edits": [
            {"filePath": "/w/a.py", "oldString": "def foo(", "newString": "def bar("},
            {"filePath": "/w/a.py", "oldString": "foo()", "newString": "bar()", "replaceAll": True},
        ],
    }
    payload = {
        "hook_event_name": "tool.execute.after",
        "tool": "multiedit",
        "sessionID": "ses_1",
        "args": args,
        "output": "",
    }
    normalised = opencode_adapter.normalise(payload)
    assert normalised["tool_input"]["edits"][0] == {
        "file_path": "/w/a.py",
        "old_string": "def foo(",
        "new_string": "def bar(",
    }
    assert normalised["tool_input"]["edits"][1]["replace_all"] is True
    event = ToolEvent(
        content_session_id="ses_1",
        project="w",
        tool_name=normalised["tool_name"],
        tool_input=normalised["tool_input"],
        tool_response="",
        cwd="/w",
        prompt_number=1,
    )
    [draft] = OfflineCompressor().observe(event).observations
    assert "replaced `def foo(` with `def bar(`" in draft.facts
