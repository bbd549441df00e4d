"""The demo: replay bundled coding sessions through the *real* pipeline into a demo data dir.

``data/demo/sessions.json`` describes sessions as a person would remember them (cwd, prompts,
the tool calls each prompt made, the assistant's closing message). ``hook_payloads`` turns
each into the exact Claude Code hook payloads (SessionStart, UserPromptSubmit, PostToolUse,
Stop, SessionEnd), and ``run`` feeds them to the hook scripts as subprocesses, exactly as
Claude Code would, against a service on the demo data dir. Nothing is written directly into
the database, so the demo exercises capture, ingest and compression end to end.

The demo data dir is never the user's real store: it defaults to ``./.demo/data``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.claude_settings import HOOK_SCRIPTS, HOOKS_DIR

DEMO_SOURCE = Path(__file__).resolve().parent.parent / "data" / "demo" / "sessions.json"
DEFAULT_DEMO_DIR = Path(".demo") / "data"


@dataclass(frozen=True)
class HookCall:
    event: str
    payload: dict[str, Any]


def load_sessions(path: Path = DEMO_SOURCE) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    sessions: list[dict[str, Any]] = data["sessions"]
    return sessions


def _transcript(folder: Path, session_id: str, lines: list[dict[str, Any]]) -> Path:
    path = folder / f"{session_id}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")
    return path


def hook_payloads(session: dict[str, Any], transcripts: Path) -> Iterator[HookCall]:
    """The Claude Code hook payloads one demo session produces, in order."""
    sid = session.get("session_id") or str(uuid.uuid5(uuid.NAMESPACE_URL, session["title"]))
    cwd = session["cwd"]
    lines: list[dict[str, Any]] = []
    transcript = transcripts / f"{sid}.jsonl"
    common = {"session_id": sid, "cwd": cwd, "transcript_path": str(transcript)}
    yield HookCall(
        "SessionStart", {**common, "hook_event_name": "SessionStart", "source": "startup"}
    )
    for turn_index, turn in enumerate(session["turns"]):
        lines.append({"type": "user", "message": {"role": "user", "content": turn["prompt"]}})
        yield HookCall(
            "UserPromptSubmit",
            {**common, "hook_event_name": "UserPromptSubmit", "prompt": turn["prompt"]},
        )
        for call_index, tool in enumerate(turn.get("tools", [])):
            yield HookCall(
                "PostToolUse",
                {
                    **common,
                    "hook_event_name": "PostToolUse",
                    "tool_name": tool["tool_name"],
                    "tool_input": tool.get("tool_input", {}),
                    "tool_response": tool.get("tool_response", {}),
                    "tool_use_id": f"toolu_{sid[:8]}_{turn_index}_{call_index}",
                },
            )
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": turn.get("assistant", "")}],
                },
            }
        )
        _transcript(transcripts, sid, lines)
        yield HookCall("Stop", {**common, "hook_event_name": "Stop", "stop_hook_active": False})
    yield HookCall(
        "SessionEnd",
        {
            "session_id": sid,
            "hook_event_name": "SessionEnd",
            "reason": "prompt_input_exit",
            "cwd": cwd,
        },
    )


def run_hook(call: HookCall, env: dict[str, str], python: str | None = None) -> str:
    """Run one hook script like Claude Code does; return its stdout."""
    script = HOOKS_DIR / HOOK_SCRIPTS[call.event][0]
    proc = subprocess.run(
        [python or sys.executable, "-S", str(script)],
        input=json.dumps(call.payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return proc.stdout


def all_calls(sessions: list[dict[str, Any]], transcripts: Path) -> list[HookCall]:
    transcripts.mkdir(parents=True, exist_ok=True)
    return [call for s in sessions for call in hook_payloads(s, transcripts)]


def replay_sessions(
    calls: list[HookCall],
    env: dict[str, str],
    progress: Callable[[int, int], None] | None = None,
) -> float:
    """Feed every call through its hook; return the seconds it took."""
    start = time.perf_counter()
    for index, call in enumerate(calls, start=1):
        run_hook(call, env)
        if progress:
            progress(index, len(calls))
    return time.perf_counter() - start
