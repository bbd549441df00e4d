"""Gemini CLI and Codex CLI through the real hook scripts: adapters, platform_source, context.

Every fixture in ``tests/fixtures/hooks/<platform>/`` (real-shaped, sources in each README) is
fed to the real script, as a subprocess run with ``--platform <name>``, the way the agent's
hook command runs it. Peers are real: nothing listening (the spool), or the real service
(``make_service``). The Claude Code path is covered, unchanged, by tests/test_hooks*.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hooks import user_prompt_submit
from hooks.adapters import PLATFORMS
from hooks.adapters import claude as claude_adapter
from hooks.adapters import codex as codex_adapter
from hooks.adapters import cursor as cursor_adapter
from hooks.adapters import gemini as gemini_adapter
from hooks.adapters import opencode as opencode_adapter
from hooks.adapters import windsurf as windsurf_adapter
from tests.agent_hooks import assert_carries_memory, db_rows, run_as_agent, script_argv, spooled
from tests.conftest import FIXTURES, base_env, free_port
from tests.hook_harness import Recorder
from workbench.platforms import HOOK_PLATFORM_SOURCES, PLATFORM_SOURCES

SCRIPT_FOR_EVENT = {
    "gemini": {
        "SessionStart": "session_start",
        "BeforeAgent": "user_prompt_submit",
        "AfterTool": "post_tool_use",
        "AfterAgent": "stop",
        "SessionEnd": "session_end",
    },
    "codex": {
        "SessionStart": "session_start",
        "UserPromptSubmit": "user_prompt_submit",
        "PostToolUse": "post_tool_use",
        "Stop": "stop",
    },
}
SOURCE = {"gemini": "gemini-cli", "codex": "codex-cli"}
# One session per platform, in the order the agent fires the events.
SESSION = {
    "gemini": [
        "before_agent",
        "after_tool_read_file",
        "after_tool_replace",
        "after_tool_run_shell_command",
        "after_agent",
        "session_end",
    ],
    "codex": ["user_prompt_submit", "post_tool_use_bash_read", "post_tool_use_bash_pytest", "stop"],
}
NO_OPS = {"gemini": {"after_agent_stop_hook_active"}, "codex": {"stop_hook_active"}}
# Where each platform's final answer is in its Stop-like payload.
ANSWER_KEY = {"gemini": "prompt_response", "codex": "last_assistant_message"}


def fixture_names(platform: str) -> list[str]:
    return sorted(p.stem for p in (FIXTURES / "hooks" / platform).glob("*.json"))


def load(platform: str, name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "hooks" / platform / f"{name}.json").read_text("utf-8"))


def run(platform: str, payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Run the hook for ``payload`` as the agent would; assert the contract; return its JSON."""
    script = SCRIPT_FOR_EVENT[platform][payload["hook_event_name"]]
    return run_as_agent(script_argv(script, platform), payload, env)


ALL = [(platform, name) for platform in SESSION for name in fixture_names(platform)]
# SessionStart with the service down spawns it (tests/test_hooks_session_start.py covers that path).
DELIVERING = [(pl, n) for pl, n in ALL if load(pl, n)["hook_event_name"] != "SessionStart"]


# ----- the adapters and the fixtures ----------------------------------------------------------


def test_every_adapter_names_a_known_platform_source() -> None:
    adapters = {
        "claude": claude_adapter,
        "gemini": gemini_adapter,
        "codex": codex_adapter,
        "cursor": cursor_adapter,  # its own tests: tests/test_hooks_cursor.py
        "windsurf": windsurf_adapter,
        "opencode": opencode_adapter,
    }
    assert set(adapters) == set(PLATFORMS)
    assert {a.PLATFORM_SOURCE: n for n, a in adapters.items()} == HOOK_PLATFORM_SOURCES


@pytest.mark.parametrize("platform", sorted(SESSION))
def test_fixtures_cover_every_registered_event(platform: str) -> None:
    payloads = [load(platform, n) for n in fixture_names(platform)]
    assert {p["hook_event_name"] for p in payloads} == set(SCRIPT_FOR_EVENT[platform])
    for payload in payloads:
        assert payload["session_id"]
        assert payload["cwd"]
    assert (FIXTURES / "hooks" / platform / "README.md").is_file()


# ----- service down: exit 0, one JSON line, the spool -----------------------------------------


@pytest.mark.parametrize(("platform", "name"), DELIVERING)
def test_every_fixture_exits_0_and_spools_when_service_down(
    platform: str, name: str, data_dir: Path
) -> None:
    payload = load(platform, name)
    assert run(platform, payload, base_env(data_dir, free_port())) == {}
    if name in NO_OPS[platform]:
        assert spooled(data_dir) == []
        return
    (envelope,) = spooled(data_dir)
    assert envelope.body["contentSessionId"] == payload["session_id"]
    if envelope.path == "/api/sessions/init":
        assert envelope.body["platformSource"] == SOURCE[platform]
        assert envelope.body["prompt"] == payload["prompt"]
        assert envelope.body["project"] == "acme-api"
    if envelope.path == "/api/sessions/summarize":
        assert envelope.body["last_assistant_message"] == payload[ANSWER_KEY[platform]]
    if envelope.path == "/api/sessions/observations":
        if platform == "gemini":  # Claude Code's tool vocabulary, the text the model saw
            assert envelope.body["tool_name"] in {"Read", "Edit", "Bash"}
            assert envelope.body["tool_response"] == payload["tool_response"]["llmContent"]
        else:
            assert envelope.body["tool_name"] == payload["tool_name"]
            assert envelope.body["tool_response"] == payload["tool_response"]
        assert envelope.body["tool_input"] == payload["tool_input"]


# ----- end to end against the real service ----------------------------------------------------


@pytest.mark.parametrize("platform", sorted(SESSION))
def test_a_session_end_to_end_then_the_next_session_gets_its_context(
    platform: str, make_service: Any
) -> None:
    svc = make_service()
    start = load(platform, "session_start")
    before = json.dumps(run(platform, start, svc.env))  # nothing remembered yet
    for name in SESSION[platform]:
        run(platform, load(platform, name), svc.env)
    for name in NO_OPS[platform]:  # a Stop re-entry: no second summary
        assert run(platform, load(platform, name), svc.env) == {}
    svc.wait_idle()
    session_id = start["session_id"]
    (session,) = db_rows(svc, "SELECT * FROM sessions WHERE content_session_id = ?", session_id)
    assert session["platform_source"] == SOURCE[platform]
    assert session["project"] == "acme-api"
    observations = db_rows(
        svc, "SELECT * FROM observations WHERE content_session_id = ?", session_id
    )
    assert observations
    assert {o["platform_source"] for o in observations} == {SOURCE[platform]}
    summaries = db_rows(
        svc, "SELECT * FROM session_summaries WHERE content_session_id = ?", session_id
    )
    assert len(summaries) == 1
    # The next session of the same project gets the memory, in the platform's own shape.
    nxt = {**start, "session_id": session_id + "-next"}
    output = run(platform, nxt, svc.env)
    assert_carries_memory(output, before, [o["title"] for o in observations])


@pytest.mark.parametrize("platform", sorted(SESSION))
def test_prompt_context_answers_with_the_platforms_prompt_event(
    platform: str, data_dir: Path
) -> None:
    """Related memories for a prompt: Gemini names the event BeforeAgent, Codex as Claude."""
    peer = Recorder()
    block = b"<workbench-context>\nrelated\n</workbench-context>"
    peer.replies[user_prompt_submit.CONTEXT_ROUTE] = (200, block)
    try:
        env = base_env(data_dir, peer.port, WORKBENCH_PROMPT_INJECTION="true")
        name = {"gemini": "before_agent", "codex": "user_prompt_submit"}[platform]
        output = run(platform, load(platform, name), env)
        (init, _ask) = [r.json() if r.method == "POST" else None for r in peer.requests]
    finally:
        peer.close()
    event = {"gemini": "BeforeAgent", "codex": "UserPromptSubmit"}[platform]
    assert output == {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": block.decode()}
    }
    assert init["platformSource"] == SOURCE[platform]


def test_search_filters_by_platform_source(make_service: Any) -> None:
    svc = make_service()
    for platform in sorted(SESSION):
        for name in SESSION[platform]:
            run(platform, load(platform, name), svc.env)
    svc.wait_idle()
    for platform in sorted(SESSION):
        source = SOURCE[platform]
        status, page = svc.get(
            f"/api/search?query=acme&type=observations&format=json&platform_source={source}"
        )
        assert status == 200, page
        ids = {hit["id"] for hit in page["observations"]}
        assert ids, page
        rows = db_rows(svc, "SELECT id FROM observations WHERE platform_source = ?", source)
        assert ids <= {r["id"] for r in rows}


def test_an_unknown_platform_source_is_a_precise_422_and_stores_nothing(make_service: Any) -> None:
    svc = make_service()
    body = {"contentSessionId": "s-1", "project": "p", "prompt": "hi", "platformSource": "gemini"}
    status, reply = svc.post("/api/sessions/init", body)
    assert status == 422, reply
    text = json.dumps(reply)
    assert "platformSource" in text
    for known in PLATFORM_SOURCES:
        assert f"'{known}'" in text
    assert db_rows(svc, "SELECT * FROM sessions") == []
    for known in PLATFORM_SOURCES:
        status, reply = svc.post(
            "/api/sessions/init", {**body, "contentSessionId": known, "platformSource": known}
        )
        assert status == 200, reply
    rows = db_rows(svc, "SELECT content_session_id, platform_source FROM sessions")
    assert {r["content_session_id"]: r["platform_source"] for r in rows} == {
        k: k for k in PLATFORM_SOURCES
    }
