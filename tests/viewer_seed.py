"""Seed a running test service with the bundled demo data, through its public HTTP API.

``data/demo/memory.json`` (an export) is imported when it exists; otherwise the sessions of
``data/demo/sessions.json`` are sent as the hooks would send them (init with the prompt, one
observation per tool call, summarize with the assistant's closing message, end), so the
worker derives real observations and summaries from them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, Service
from workbench.demo import load_sessions

MEMORY = ROOT / "data" / "demo" / "memory.json"


def seed_demo(svc: Service) -> dict[str, Any]:
    """Fill ``svc`` with the demo; return the store totals once the worker is idle."""
    if MEMORY.exists():
        status, body = svc.post("/api/import", json.loads(MEMORY.read_text(encoding="utf-8")))
        assert status == 200, body
    else:
        for session in load_sessions():
            _send_session(svc, session)
    svc.wait_idle(timeout=60)
    _, stats = svc.get("/api/stats")
    return dict(stats["totals"])


def _send_session(svc: Service, session: dict[str, Any]) -> None:
    sid = session["session_id"]
    cwd = session["cwd"]
    project = Path(cwd).name
    for turn in session["turns"]:
        status, body = svc.post(
            "/api/sessions/init",
            {"contentSessionId": sid, "project": project, "prompt": turn["prompt"]},
        )
        assert status == 200, body
        for tool in turn.get("tools", []):
            status, body = svc.post(
                "/api/sessions/observations",
                {
                    "contentSessionId": sid,
                    "tool_name": tool["tool_name"],
                    "tool_input": tool.get("tool_input", {}),
                    "tool_response": tool.get("tool_response", {}),
                    "cwd": cwd,
                },
            )
            assert status == 200, body
        status, body = svc.post(
            "/api/sessions/summarize",
            {"contentSessionId": sid, "last_assistant_message": turn.get("assistant", "")},
        )
        assert status == 200, body
    svc.post("/api/sessions/end", {"contentSessionId": sid})
