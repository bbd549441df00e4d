"""Gemini CLI 0.61's own payloads through the real hooks and the real service (issue 20, 10-12).

The payloads in ``tests/fixtures/hooks/gemini/real-0.61/`` were captured from the real
program (see its README). Hooks run as subprocesses with ``--platform gemini``, the way
Gemini runs them; the peer is either nothing (the spool: what the hook itself sends) or the
real service (what is stored).

- item 10: the SessionStart context comes back inside the prompt, escaped
  (``<hook_context>&lt;workbench-context&gt;…``). Our own block must never be stored, in any
  escaping: not by the hook, and not by the service if a client sends it anyway.
- item 11: ``tool_response`` shaped ``{"llmContent": …, "returnDisplay": …}`` (MCP tools,
  ``list_directory``) makes an observation.
- item 12: SessionEnd sent three times for one session end is one event.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent_hooks import db_rows, run_as_agent, script_argv, spooled
from tests.conftest import FIXTURES, Service, base_env, free_port, http_json
from tests.fuzz_strategies import TAG_ESCAPINGS

REAL = FIXTURES / "hooks" / "gemini" / "real-0.61"
PROMPT = "read the notes please"
MEMORY = "# workbench memory · project acme-api\n- Read notes.md: deploy key rotates on Tuesdays"
ESCAPINGS = TAG_ESCAPINGS  # every way our fence has come back, or could


def load(name: str, cwd: Path) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((REAL / f"{name}.json").read_text("utf-8"))
    payload["cwd"] = str(cwd)
    return payload


def fenced(lt: str, gt: str) -> str:
    """Our block as it comes back: ``<workbench-context>`` with ``lt``/``gt`` for < and >."""
    return f"{lt}workbench-context{gt}\n{MEMORY}\n{lt}/workbench-context{gt}"


def gemini_prompt(lt: str, gt: str) -> str:
    """The prompt Gemini's ``-p`` mode hands BeforeAgent: the context, then the user's text."""
    return f"<hook_context>{fenced(lt, gt)}</hook_context>\n\n{PROMPT}"


def hook(script: str, payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    return run_as_agent(script_argv(script, "gemini"), payload, env)


# ----- item 10: the escaped fence -------------------------------------------------------------


def test_the_captured_prompt_is_sent_without_the_memory(tmp_path: Path, data_dir: Path) -> None:
    payload = load("before_agent_hook_context", tmp_path)
    assert "&lt;workbench-context&gt;" in payload["prompt"]  # the real shape, as captured
    hook("user_prompt_submit", payload, base_env(data_dir, free_port()))
    (envelope,) = spooled(data_dir)
    assert envelope.body["prompt"] == PROMPT


@pytest.mark.parametrize("escaping", sorted(ESCAPINGS))
def test_the_hook_sends_no_escaped_fence(escaping: str, tmp_path: Path, data_dir: Path) -> None:
    lt, gt = ESCAPINGS[escaping]
    payload = {**load("before_agent_hook_context", tmp_path), "prompt": gemini_prompt(lt, gt)}
    hook("user_prompt_submit", payload, base_env(data_dir, free_port()))
    (envelope,) = spooled(data_dir)
    assert envelope.body["prompt"] == PROMPT


@pytest.mark.parametrize("escaping", sorted(ESCAPINGS))
def test_the_service_stores_no_escaped_fence(escaping: str, service: Service) -> None:
    """A client that does not strip (an old hook, a spool file, a script) is stripped again."""
    lt, gt = ESCAPINGS[escaping]
    for number, text in enumerate([gemini_prompt(lt, gt), f"{PROMPT} {fenced(lt, gt)}"]):
        session = f"s-{escaping}-{number}"
        body = {"contentSessionId": session, "project": "acme-api", "prompt": text}
        body["platformSource"] = "gemini-cli"
        status, reply = http_json("POST", f"{service.url}/api/sessions/init", body)
        assert status == 200, reply
        (row,) = db_rows(
            service, "SELECT prompt_text FROM user_prompts WHERE content_session_id = ?", session
        )
        assert row["prompt_text"] == PROMPT
        assert "Tuesdays" not in json.dumps(db_rows(service, "SELECT payload FROM events"))


def test_an_escaped_tag_that_is_not_ours_is_text(data_dir: Path, tmp_path: Path) -> None:
    """Only the stripped tags go: an HTML-escaped ``<b>`` the user pasted stays."""
    text = f"why does &lt;b&gt;bold&lt;/b&gt; render raw? {PROMPT}"
    payload = {**load("before_agent_hook_context", tmp_path), "prompt": text}
    hook("user_prompt_submit", payload, base_env(data_dir, free_port()))
    (envelope,) = spooled(data_dir)
    assert envelope.body["prompt"] == text


# ----- item 11: llmContent / returnDisplay ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "title_has"),
    [("after_tool_list_directory", "Listed"), ("after_tool_mcp_foreign", "deploy key rotation")],
)
def test_an_llmcontent_response_makes_an_observation(
    name: str, title_has: str, service: Service, tmp_path: Path
) -> None:
    start = load("before_agent_hook_context", tmp_path)
    hook("user_prompt_submit", start, service.env)
    call = load(name, tmp_path)
    hook("post_tool_use", call, service.env)
    service.wait_idle()
    rows = db_rows(
        service,
        "SELECT title, narrative, platform_source FROM observations WHERE content_session_id = ?",
        call["session_id"],
    )
    assert len(rows) == 1, rows
    assert title_has in rows[0]["title"]
    assert rows[0]["platform_source"] == "gemini-cli"


def test_the_hook_sends_the_text_the_model_saw(tmp_path: Path, data_dir: Path) -> None:
    env = base_env(data_dir, free_port())
    hook("post_tool_use", load("after_tool_mcp_foreign", tmp_path), env)
    hook("post_tool_use", load("after_tool_list_directory", tmp_path), env)
    mcp, listing = (e.body for e in spooled(data_dir))
    assert mcp["tool_name"] == "mcp_github_search_issues"
    assert mcp["tool_response"] == "Found 1 issue: #42 Rotate the deploy key every Tuesday (open)"
    assert listing["tool_name"] == "LS"
    assert listing["tool_response"].startswith("Directory listing for /home/dev/acme-api:")


def test_the_service_reads_an_unflattened_llmcontent(service: Service, tmp_path: Path) -> None:
    """An event an older hook spooled as Gemini sent it still makes an observation."""
    call = load("after_tool_mcp_foreign", tmp_path)
    hook("user_prompt_submit", load("before_agent_hook_context", tmp_path), service.env)
    body = {
        "contentSessionId": call["session_id"],
        "tool_name": call["tool_name"],
        "tool_input": call["tool_input"],
        "tool_response": call["tool_response"],
        "cwd": call["cwd"],
    }
    status, reply = http_json("POST", f"{service.url}/api/sessions/observations", body)
    assert status == 200, reply
    service.wait_idle()
    (row,) = db_rows(service, "SELECT narrative FROM observations")
    assert "#42 Rotate the deploy key" in row["narrative"]


def test_our_own_mcp_tool_is_still_not_a_memory(tmp_path: Path, data_dir: Path) -> None:
    hook("post_tool_use", load("after_tool_mcp_workbench_search", tmp_path), base_env(data_dir, 1))
    assert spooled(data_dir) == []


# ----- item 12: one SessionEnd per session end ------------------------------------------------


def session_ends(svc: Service, session: str) -> list[dict[str, Any]]:
    return db_rows(
        svc,
        "SELECT id FROM events WHERE kind = 'session_end' AND content_session_id = ?",
        session,
    )


def test_session_end_sent_three_times_is_one_event(service: Service, tmp_path: Path) -> None:
    hook("user_prompt_submit", load("before_agent_hook_context", tmp_path), service.env)
    end = load("session_end_exit", tmp_path)
    for _ in range(3):  # what /quit sent
        assert hook("session_end", end, service.env) == {}
    assert len(session_ends(service, end["session_id"])) == 1
    (session,) = db_rows(
        service, "SELECT status FROM sessions WHERE content_session_id = ?", end["session_id"]
    )
    assert session["status"] == "completed"


def test_a_resumed_session_ends_again(service: Service, tmp_path: Path) -> None:
    """A prompt after the end (``gemini --resume``) reopens the session: its end is new."""
    start = load("before_agent_hook_context", tmp_path)
    end = load("session_end_exit", tmp_path)
    hook("user_prompt_submit", start, service.env)
    hook("session_end", end, service.env)
    hook("user_prompt_submit", {**start, "prompt": "and the tests too"}, service.env)
    hook("session_end", end, service.env)
    hook("session_end", end, service.env)
    assert len(session_ends(service, end["session_id"])) == 2


def test_session_ends_replayed_from_the_spool_are_one_event(
    make_service: Any, data_dir: Path, tmp_path: Path
) -> None:
    """The service was down at /quit: three spooled ends, replayed at start, are one event."""
    port = free_port()
    env = base_env(data_dir, port)
    hook("user_prompt_submit", load("before_agent_hook_context", tmp_path), env)
    end = load("session_end_exit", tmp_path)
    for _ in range(3):
        hook("session_end", end, env)
    assert len(spooled(data_dir)) == 4
    svc = make_service(port)
    svc.wait_idle()
    assert len(session_ends(svc, end["session_id"])) == 1
