"""Cursor (``~/.cursor/hooks.json``): its agent events mapped to the normalised ones.

Source: Cursor's hooks reference, https://cursor.com/docs/agent/hooks (Cursor is closed
source), as copied into thedotmack/claude-mem ``docs/context/cursor-hooks-reference.md`` at
commit e2d1df56; claude-mem's ``src/cli/adapters/cursor.ts`` (same commit) reads the same
fields. Every event carries ``conversation_id`` (stable across a chat's turns),
``generation_id`` (one per user message), ``model``, ``hook_event_name``, ``cursor_version``,
``workspace_roots`` and ``user_email``; then:

- beforeSubmitPrompt (= UserPromptSubmit): ``prompt``, ``attachments``; answered with
  ``{"continue": true}`` (``false`` would block the prompt). No context can be returned.
- afterShellExecution (= PostToolUse, ``Bash``): ``command``, ``output``, ``duration``
- afterMCPExecution (= PostToolUse): ``tool_name``, ``tool_input`` and ``result_json``, both
  JSON *strings*, ``duration``
- afterFileEdit (= PostToolUse, ``Edit``/``MultiEdit``): ``file_path``, ``edits``
  (``old_string``/``new_string`` pairs)
- stop (= Stop): ``status`` (completed / aborted / error), ``loop_count``. The final answer is
  not in the payload, and no transcript path is given, so the summary is built without it.

The session is the conversation (``conversation_id``); cwd and project come from the first
workspace root. Tool calls take the shape of the Claude Code tool with the same parameters, so
the compressors' rules apply: a shell command is ``Bash`` ``{"command"}`` with its output as
the response; one edit is ``Edit`` ``{"file_path", "old_string", "new_string"}``, several are
``MultiEdit`` ``{"file_path", "edits"}``; an MCP tool keeps its name, its input and result
parsed from their JSON strings (when they parse; the text otherwise).

Cursor has no context-injection API: the memory goes into the project's rules file
(``CONTEXT_FILE``, written by ``hooks/context_file.py``), which Cursor reads into every chat.
"""

from __future__ import annotations

import json

from workbench import redact

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

PLATFORM_SOURCE = "cursor"

# Cursor's event name -> the normalised (Claude Code) one.
TO_NORMALISED = {
    "beforeSubmitPrompt": "UserPromptSubmit",
    "afterShellExecution": "PostToolUse",
    "afterMCPExecution": "PostToolUse",
    "afterFileEdit": "PostToolUse",
    "stop": "Stop",
}
FROM_NORMALISED = {"UserPromptSubmit": "beforeSubmitPrompt", "Stop": "stop"}

# The project file Cursor reads as an always-applied rule (relative to the workspace root).
CONTEXT_FILE = ".cursor/rules/workbench-context.mdc"
# Our mark, in the front matter of the file we write (``CONTEXT_HEAD``).
CONTEXT_MARK = "workbench memory of earlier sessions in this project"
# Front matter of a project rule (Cursor's rules docs, and claude-mem's
# ``src/utils/cursor-utils.ts`` ``writeContextFile``): always in the model's context.
CONTEXT_HEADER = (
    "---\n"
    f"description: {CONTEXT_MARK} (written by workbench"
    " at each prompt and at the end of each turn; edits are overwritten)\n"
    "alwaysApply: true\n"
    "---\n\n"
)
# How every file we write begins: a file that does not begin so is the user's, even if it
# quotes our mark (``hooks/context_file.py`` ``is_foreign``).
CONTEXT_HEAD = CONTEXT_HEADER


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _parsed(value: Any) -> Any:
    """A JSON string's object or array (redacted again: parsing can unescape a lone
    surrogate, or nest past what the service accepts); anything else as it was."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "["):
        return value
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return redact.redact_value(parsed, surrogates=True, max_depth=redact.MAX_DEPTH - 2)


def _workspace_root(payload: dict[str, Any]) -> str:
    roots = payload.get("workspace_roots")
    if isinstance(roots, list):
        for root in roots:
            if isinstance(root, str) and root:
                return root
    return _text(payload.get("cwd"))


def _file_edit(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    path = _text(payload.get("file_path"))
    raw = payload.get("edits")
    edits = [
        {"old_string": _text(e.get("old_string")), "new_string": _text(e.get("new_string"))}
        for e in (raw if isinstance(raw, list) else [])
        if isinstance(e, dict)
    ]
    if len(edits) == 1:
        return "Edit", {"file_path": path, **edits[0]}
    return "MultiEdit", {"file_path": path, "edits": edits}


def normalise(payload: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's field names (see the module docstring for each event)."""
    out = dict(payload)
    name = payload.get("hook_event_name")
    if isinstance(name, str):
        out["hook_event_name"] = TO_NORMALISED.get(name, name)
    out["session_id"] = _text(payload.get("conversation_id"))
    out["cwd"] = _workspace_root(payload)
    out["transcript_path"] = ""
    out["last_assistant_message"] = ""  # not in Cursor's payload; no transcript to read
    out["stop_hook_active"] = False  # loop_count counts a whole conversation's follow-ups
    for key in ("agent_id", "agent_type"):  # not Cursor's: must not make a stop a no-op
        out.pop(key, None)
    if name == "afterShellExecution":
        out["tool_name"] = "Bash"
        out["tool_input"] = {"command": _text(payload.get("command"))}
        out["tool_response"] = payload.get("output")
    elif name == "afterMCPExecution":
        out["tool_input"] = _parsed(payload.get("tool_input"))
        out["tool_response"] = _parsed(payload.get("result_json"))
    elif name == "afterFileEdit":
        out["tool_name"], out["tool_input"] = _file_edit(payload)
        out["tool_response"] = {"filePath": _text(payload.get("file_path"))}
    return out


def event_name(kind: str) -> str:
    """Cursor's name for the normalised event ``kind`` (``beforeSubmitPrompt``, ``stop``)."""
    return FROM_NORMALISED.get(kind, kind)


def output(kind: str, result: dict[str, Any]) -> dict[str, Any]:  # noqa: ARG001 - the shape
    """Cursor's stdout for ``kind``: beforeSubmitPrompt must say ``continue``; nothing else
    is read from an after-event or a stop we never continue. A Claude-shaped context
    (``hookSpecificOutput``) has no Cursor equivalent and is dropped: see ``CONTEXT_FILE``."""
    return {"continue": True} if kind == "UserPromptSubmit" else {}


def context_document(context: str) -> str:
    """The rules file's text for the memory ``context``."""
    return CONTEXT_HEADER + context.strip() + "\n"
