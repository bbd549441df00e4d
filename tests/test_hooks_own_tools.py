"""Our own MCP tools and the agent's tool discovery are never memories (issue 20, item 3).

Claude Code 2.1 calls ``ToolSearch`` before any MCP use, and every call of
``mcp__workbench__search`` & co. went through PostToolUse into the store, so the memory fed on
itself at the next SessionStart, and ``save_memory`` was stored twice. Here the real hook
scripts run as subprocesses with each platform's spelling of those calls against the real
service (nothing stored, and a control call of ``Bash`` in the same session is), the service
drops them when posted directly (an older hook, a spooled event), and a ``save_memory``
through the real MCP server, followed by its PostToolUse, stores exactly one row.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from hooks.post_tool_use import ROUTE
from tests.agent_hooks import db_rows, run_as_agent, script_argv
from tests.conftest import ROOT, base_env
from tests.hook_harness import Recorder
from workbench import own_tools, spool

CWD = "/home/dev/code/acme-api"
SESSION = "own-tools-session"


def claude(tool: str, response: Any = "ok") -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "hook_event_name": "PostToolUse",
        "cwd": CWD,
        "tool_name": tool,
        "tool_input": {"query": "auth"},
        "tool_response": response,
        "tool_use_id": f"toolu_{tool}",
    }


def gemini(tool: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "hook_event_name": "AfterTool",
        "cwd": CWD,
        "tool_name": tool,
        "tool_input": {"query": "auth"},
        "tool_response": {"llmContent": "1 hit", "returnDisplay": "1 hit"},
    }


def opencode(tool: str) -> dict[str, Any]:
    return {
        "hook_event_name": "tool.execute.after",
        "sessionID": SESSION,
        "directory": CWD,
        "tool": tool,
        "callID": f"call_{tool}",
        "args": {"query": "auth"},
        "output": "1 hit",
    }


def windsurf(tool: str) -> dict[str, Any]:
    return {
        "agent_action_name": "post_mcp_tool_use",
        "trajectory_id": SESSION,
        "execution_id": f"exec-{tool}",
        "tool_info": {
            "mcp_server_name": "workbench",
            "mcp_tool_name": tool,
            "mcp_tool_arguments": {"query": "auth"},
            "mcp_result": "1 hit",
        },
    }


# (platform, payload) for every spelling an agent gives our tools and its own tool discovery.
NOT_MEMORIES: list[tuple[str, dict[str, Any]]] = [
    ("claude", claude("ToolSearch", {"matches": ["mcp__workbench__search"]})),
    ("codex", claude("tool_search")),
    *[("claude", claude(f"mcp__workbench__{tool}")) for tool in sorted(own_tools.OWN_TOOLS)],
    ("claude", claude("mcp__plugin_workbench_workbench__timeline")),
    ("codex", claude("mcp__workbench__get_observations")),
    ("gemini", gemini("mcp_workbench_search")),
    ("gemini", gemini("workbench__timeline")),
    ("opencode", opencode("workbench_search")),
    ("opencode", opencode("workbench_save_memory")),
    ("windsurf", windsurf("search")),
]


def events_of(svc: Any, kind: str) -> list[dict[str, Any]]:
    return db_rows(svc, "SELECT * FROM events WHERE kind = ?", kind)


def test_own_tool_calls_and_tool_discovery_store_nothing_through_any_agents_hook(
    make_service: Any,
) -> None:
    svc = make_service()
    for platform, payload in NOT_MEMORIES:
        run_as_agent(script_argv("post_tool_use", platform), payload, svc.env)
    control = claude("Bash", {"stdout": "4 passed", "stderr": "", "exit_code": 0})
    control["tool_input"] = {"command": "pytest -q tests/test_auth.py"}
    run_as_agent(script_argv("post_tool_use", "claude"), control, svc.env)
    svc.wait_idle()
    stored = events_of(svc, "observation")
    assert [json.loads(e["payload"])["tool_name"] for e in stored] == ["Bash"]
    assert len(db_rows(svc, "SELECT id FROM observations")) == 1


def test_the_hook_does_not_even_post_them(data_dir: Path, recorder: Recorder) -> None:
    env = base_env(data_dir, recorder.port)
    for platform, payload in NOT_MEMORIES:
        run_as_agent(script_argv("post_tool_use", platform), payload, env)
    assert [r.path for r in recorder.requests if "observations" in r.path] == []
    run_as_agent(script_argv("post_tool_use", "claude"), claude("Bash"), env)  # the control
    assert [r.path for r in recorder.requests if "observations" in r.path] == [ROUTE]


def test_the_service_drops_them_too_for_old_hooks_and_spooled_events(make_service: Any) -> None:
    svc = make_service()
    for tool in ["ToolSearch", "mcp__workbench__save_memory", "MCP__Workbench__Search"]:
        body = {"contentSessionId": SESSION, "tool_name": tool, "tool_input": {}, "cwd": CWD}
        status, answer = svc.post("/api/sessions/observations", body)
        assert status == 200, answer
        assert answer["status"] == "skipped", answer
        assert tool in answer["reason"], answer
        assert "not memories" in answer["reason"], answer
    assert events_of(svc, "observation") == []


def test_a_spooled_call_of_our_tool_from_an_old_hook_is_dropped_at_replay(
    make_service: Any,
) -> None:
    svc = make_service()
    body = {"contentSessionId": SESSION, "tool_name": "mcp__workbench__search", "cwd": CWD}
    envelope = spool.Envelope(
        spool.new_event_key(), ROUTE, body, hook="PostToolUse", spooled_at_ns=time.time_ns()
    )
    spool.write(svc.data_dir / "spool", envelope)
    status, report = svc.post("/api/spool/replay", {})
    assert status == 200, report
    assert list((svc.data_dir / "spool").glob("*.json")) == [], report
    assert events_of(svc, "observation") == []


def test_a_memory_saved_through_mcp_is_stored_once(make_service: Any, tmp_path: Path) -> None:
    svc = make_service()
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workbench", "mcp"],
        env=base_env(svc.data_dir, svc.port),
        cwd=str(ROOT),
    )
    text = "The refresh token check rejects exp <= now; see src/acme/auth.py."

    async def save() -> str:
        with (tmp_path / "mcp-stderr.log").open("w", encoding="utf-8") as errors:
            async with stdio_client(server, errlog=errors) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(120):
                        await session.initialize()
                        result = await session.call_tool("save_memory", {"text": text})
                        return "".join(getattr(b, "text", "") for b in result.content)

    saved = json.loads(anyio.run(save))
    # What Claude Code then sends to PostToolUse for that very call.
    call = claude("mcp__workbench__save_memory", [{"type": "text", "text": json.dumps(saved)}])
    call["tool_input"] = {"text": text}
    run_as_agent(script_argv("post_tool_use", "claude"), call, svc.env)
    svc.wait_idle()
    rows = db_rows(svc, "SELECT id FROM observations")
    assert [r["id"] for r in rows] == [saved["id"]], rows
    assert events_of(svc, "observation") == []


def test_own_tools_lists_exactly_what_the_mcp_server_serves(data_dir: Path) -> None:
    from workbench.mcp_server.server import build_server
    from workbench.settings import load_settings

    server, _ = build_server(load_settings(data_dir), start=False)
    served = {tool.name for tool in anyio.run(server.list_tools)}
    assert served == own_tools.OWN_TOOLS | own_tools.PROJECT_TOOLS
    assert not own_tools.OWN_TOOLS & own_tools.PROJECT_TOOLS


def test_the_code_tools_calls_are_memories_like_a_read(data_dir: Path, recorder: Recorder) -> None:
    """smart_outline & co. read the project's code (issue 22): posted like any tool call."""
    env = base_env(data_dir, recorder.port)
    for tool in sorted(own_tools.PROJECT_TOOLS):
        assert own_tools.skip_reason(f"mcp__workbench__{tool}") is None
        run_as_agent(script_argv("post_tool_use", "claude"), claude(f"mcp__workbench__{tool}"), env)
    assert [r.path for r in recorder.requests if "observations" in r.path] == [ROUTE] * 3
