"""Staleness through the agent's own paths (issue 22, item 5): a real PostToolUse hook
delivers the Read, the real MCP server (stdio, the real MCP client) answers ``search``,
``timeline`` and ``get_observations`` with the stale mark once the file changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.conftest import Service
from tests.hook_harness import run_hook
from tests.test_mcp import params, run_session, text_of
from tests.test_staleness import commit_all, make_repo, read_call, start_session
from workbench.locate import project_identity

pytestmark = pytest.mark.slow


def test_a_hook_captured_read_goes_stale_and_the_mcp_tools_say_so(
    tmp_path: Path, service: Service
) -> None:
    repo = make_repo(tmp_path, {"engine.py": "SPEED = 88\n"})
    project = project_identity(str(repo)).name
    start_session(service, repo, "st-mcp")
    call = read_call(repo, "engine.py", 1, session="st-mcp")
    payload = {
        "hook_event_name": "PostToolUse",
        "session_id": "st-mcp",
        "cwd": str(repo),
        "tool_name": call["tool_name"],
        "tool_input": call["tool_input"],
        "tool_response": call["tool_response"],
        "tool_use_id": call["tool_use_id"],
    }
    assert run_hook("post_tool_use", payload, service.env).output() == {}
    service.wait_idle(timeout=60)
    _, page = service.get(f"/api/observations?project={project}")
    (obs_id,) = [o["id"] for o in page["items"]]
    (repo / "engine.py").write_text("SPEED = 121\n")
    commit_all(repo, "faster")

    async def script(session: ClientSession) -> dict[str, Any]:
        return {
            "get": await session.call_tool("get_observations", {"ids": [obs_id]}),
            "search": await session.call_tool("search", {"project": project}),
            "timeline": await session.call_tool("timeline", {"anchor": obs_id}),
        }

    log = run_session(
        params(service.data_dir, service.port, CLAUDE_PROJECT_DIR=str(repo)),
        script,
        tmp_path / "mcp-stderr.log",
    )
    (record,) = json.loads(text_of(log["get"]))["observations"]
    assert (record["stale"], record["stale_files"]) == (True, ["engine.py"])
    for name in ("search", "timeline"):
        lines = text_of(log[name]).splitlines()
        line = next(ln for ln in lines if ln.lstrip("> ").startswith(f"#{obs_id} "))
        assert "[stale: engine.py changed since]" in line, (name, line)
