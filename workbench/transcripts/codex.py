"""Codex's rollout lines (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) to events.

The format, as Codex 0.171.0 (npm, the suite's pin) writes it and as
``tests/test_transcripts_real.py`` checks against a real run: one ``{"timestamp", "type",
"payload"}`` object per line (0.171 adds ``ordinal``). The lines that carry memory:

- ``session_meta``: ``payload.id`` (the session id the hooks send as ``session_id``) and
  ``payload.cwd``; ``turn_context`` may move ``cwd``.
- a prompt: ``event_msg`` ``item_completed`` whose ``item.type`` is ``UserMessage`` (0.171;
  ``content`` text parts, keyed by ``turn_id``), or ``event_msg`` ``user_message`` with
  ``message`` (earlier versions). Never the ``response_item`` user messages: those also hold
  Codex's own ``<environment_context>`` and instructions.
- a tool call: ``response_item`` ``function_call`` (``name``, ``arguments`` as JSON text,
  ``call_id``, ``namespace`` for an MCP server's tools) or ``custom_tool_call`` (``input``),
  then its ``function_call_output`` / ``custom_tool_call_output`` (``call_id``, ``output``).
  Codex's shell tools (``exec_command``, ``shell``) become ``Bash`` with ``{"command": …}``,
  as Codex's PostToolUse hook names them, and their result is the command's own output
  (``event_msg`` ``item_completed`` ``CommandExecution`` ``aggregated_output``, or
  ``exec_command_end`` before 0.171), as the hook's ``tool_response`` is; an MCP tool is
  ``mcp__<server>__<tool>``. The call id is the hook's ``tool_use_id``.
- a turn's end: ``event_msg`` ``task_complete`` with ``last_agent_message``.

Everything else (``world_state``, ``token_usage_record``, ``compacted``, ``response_item``
messages and reasoning, other ``event_msg`` kinds…) carries no memory: ignored. A line with
no ``type``/``payload`` is unknown.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.transcripts import pending_calls
from workbench.transcripts.records import TranscriptEvent, epoch_ms, text

PLATFORM_SOURCE = "codex-cli"
IGNORED = frozenset({"world_state", "compacted", "token_usage_record"})
SHELL_TOOLS = frozenset({"exec_command", "shell", "shell_command", "local_shell", "container.exec"})
CALLS = frozenset({"function_call", "custom_tool_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


class CodexParser:
    """Stateful over one file: the session, its folder, calls waiting for their output."""

    platform_source = PLATFORM_SOURCE

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.pending = pending_calls.restore(state)
        self.session = text(state.get("session"))
        self.cwd = text(state.get("cwd"))
        self.ignored = 0
        self.unknown = 0

    def state(self) -> dict[str, Any]:
        return {"platform": "codex", "pending": self.pending, "session": self.session,
                "cwd": self.cwd}  # fmt: skip

    def flush(self) -> list[TranscriptEvent]:
        return []  # every turn's end is written (task_complete): nothing to close

    def feed(self, record: dict[str, Any], offset: int) -> list[TranscriptEvent]:
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(kind, str) or not isinstance(payload, dict):
            self.unknown += 1
            return []
        at = epoch_ms(record.get("timestamp"))
        if kind == "session_meta":
            self.session = text(payload.get("id")) or text(payload.get("session_id"))
            self.cwd = text(payload.get("cwd")) or self.cwd
            return []
        if kind == "turn_context":
            self.cwd = text(payload.get("cwd")) or self.cwd
            return []
        if not self.session:
            self.unknown += 1  # a line before its session_meta: nothing to file it under
            return []
        if kind == "event_msg":
            return self._event(payload, offset, at)
        if kind == "response_item":
            return self._item(payload, at)
        if kind in IGNORED:
            self.ignored += 1
        else:
            self.unknown += 1
        return []

    def _key(self, what: str) -> str:
        return f"transcript:codex:{self.session}:{what}"

    def _event(self, payload: dict[str, Any], offset: int, at: int | None) -> list[TranscriptEvent]:
        what = payload.get("type")
        turn = text(payload.get("turn_id"))
        if what == "item_completed":
            item = payload.get("item")
            if isinstance(item, dict) and item.get("type") == "CommandExecution":
                self._shell_output(item.get("id"), item.get("aggregated_output"))
                return []
            if isinstance(item, dict) and item.get("type") == "UserMessage":
                content = item.get("content")
                parts = content if isinstance(content, list) else []
                prompt = "\n".join(
                    t for p in parts if isinstance(p, dict) and (t := text(p.get("text")))
                )
                return self._prompt(prompt, turn or str(offset), at)
        elif what == "user_message":
            return self._prompt(text(payload.get("message")), turn or str(offset), at)
        elif what == "exec_command_end":  # before 0.171: a shell call's own output
            self._shell_output(payload.get("call_id"), payload.get("aggregated_output"))
            return []
        elif what == "task_complete":
            said = text(payload.get("last_agent_message"))
            key = self._key(f"{turn or offset}:stop")
            return [TranscriptEvent("stop", self.session, self.cwd, key, at, text=said)]
        self.ignored += 1
        return []

    def _shell_output(self, call_id: Any, output: Any) -> None:
        """Keep a shell call's plain output for its result: what PostToolUse's
        ``tool_response`` holds (the ``function_call_output`` wraps it in a chunk header)."""
        if isinstance(call_id, str) and call_id in self.pending and isinstance(output, str):
            self.pending[call_id] = [*self.pending[call_id][:2], output]

    def _prompt(self, prompt: str, turn: str, at: int | None) -> list[TranscriptEvent]:
        if not prompt.strip():
            self.ignored += 1
            return []
        key = self._key(f"{turn}:prompt")
        return [TranscriptEvent("prompt", self.session, self.cwd, key, at, text=prompt)]

    def _item(self, payload: dict[str, Any], at: int | None) -> list[TranscriptEvent]:
        what = payload.get("type")
        call_id = payload.get("call_id")
        if what in CALLS and isinstance(call_id, str):
            self.pending[call_id] = list(_call(payload))
            pending_calls.bound(self.pending)
            return []
        if what in OUTPUTS and isinstance(call_id, str):
            if call_id not in self.pending:
                self.unknown += 1
                return []
            name, arguments, *shell = self.pending.pop(call_id)
            return [
                TranscriptEvent(
                    "tool",
                    self.session,
                    self.cwd,
                    self._key(call_id),
                    at,
                    tool_name=name,
                    tool_input=arguments,
                    tool_response=shell[0] if shell else payload.get("output"),
                    tool_use_id=call_id,
                )
            ]
        self.ignored += 1
        return []


def _call(payload: dict[str, Any]) -> tuple[str, Any]:
    """A call's tool name and input, named as Codex's PostToolUse hook names them."""
    name = text(payload.get("name"))
    raw = payload.get("arguments", payload.get("input"))
    arguments: Any = raw
    if isinstance(raw, str) and payload.get("type") == "function_call":
        try:
            arguments = json.loads(raw)
        except ValueError:
            arguments = raw
    namespace = text(payload.get("namespace"))
    if namespace:
        return f"{namespace}__{name}", arguments
    if name in SHELL_TOOLS:
        command = arguments
        if isinstance(arguments, dict):
            command = arguments.get("cmd", arguments.get("command"))
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        return "Bash", {"command": command if isinstance(command, str) else json.dumps(command)}
    return name, arguments
