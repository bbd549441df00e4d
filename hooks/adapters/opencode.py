"""OpenCode: what the workbench plugin (``hooks/opencode/workbench.js``) sends, normalised.

OpenCode has no command hooks; its plugin runs the hook scripts with ``--platform opencode``
and writes OpenCode's own shapes on stdin, plus ``hook_event_name``, ``directory`` (the
session's folder: the normalised ``cwd``) and ``worktree``. Source: anomalyco/opencode
(formerly sst/opencode), ``packages/plugin/src/index.ts`` at commit 0d4d22f4 (the ``Hooks``
interface) and ``packages/sdk/js/src/gen/types.gen.ts`` (``Session``, ``UserMessage``,
``AssistantMessage``, ``TextPart``, the ``session.*`` events); tool parameters from
``packages/opencode/src/tool/{read,edit,write,bash,grep,glob}.ts``. Per event:

- ``session.created`` (= SessionStart): ``info`` (a ``Session``: ``id``, ``directory``,
  ``parentID?``, ``title``…) and ``source``, always ``startup``: also when the plugin first
  meets a session at its prompt (resumed in a new process), because OpenCode builds the
  system prompt afresh for each model request and a resumed session holds no earlier block
- ``chat.message`` (= UserPromptSubmit): ``sessionID``, ``messageID``, ``agent``, ``message``
  (the ``UserMessage``) and its text ``parts``; the prompt is their text, synthetic parts
  (OpenCode's own insertions, such as a file's contents) left out
- ``tool.execute.after`` (= PostToolUse): ``tool``, ``sessionID``, ``callID``, ``args``,
  ``title``, ``output`` (the text the model saw), ``metadata`` (its scalars only), and
  ``parentID`` when the call ran in a subagent's child session: it then counts for the
  parent session, with the child as ``agent_id``, as Claude Code reports subagent calls.
  An MCP tool's call has no ``output``: OpenCode passes its MCP result, so the plugin sends
  its text ``content`` blocks and ``isError``, and the response is ``{content, isError}``
  (which the rules read like any tool's; issue 20 item 13)
- ``session.idle`` (= Stop): ``sessionID``, the last assistant ``message`` and its text
  ``parts``, which are the answer (there is no transcript to read); OpenCode has no stop
  re-entry, so ``stop_hook_active`` is never set
- ``session.deleted`` (= SessionEnd): ``info`` and ``reason`` ``deleted``

Built-in tools whose parameters match a Claude Code tool take its name (``read`` → ``Read``,
``edit`` → ``Edit``…), and their camelCase parameters Claude Code's names (``filePath`` →
``file_path``, ``oldString`` → ``old_string``…), so the compressors' rules apply. Other tools
(MCP ``<server>_<tool>``, plugins' own) keep their name and arguments.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

PLATFORM_SOURCE = "opencode"

# OpenCode's hook or bus event name -> the normalised (Claude Code) one, and back.
TO_NORMALISED = {
    "session.created": "SessionStart",
    "chat.message": "UserPromptSubmit",
    "tool.execute.after": "PostToolUse",
    "session.idle": "Stop",
    "session.deleted": "SessionEnd",
}
FROM_NORMALISED = {value: key for key, value in TO_NORMALISED.items()}
# OpenCode built-in tool -> the Claude Code tool with the same parameters.
TOOL_NAMES = {
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "multiedit": "MultiEdit",
    "bash": "Bash",
    "grep": "Grep",
    "glob": "Glob",
    "list": "LS",
    "webfetch": "WebFetch",
    "websearch": "WebSearch",
    "todowrite": "TodoWrite",
    "task": "Task",
}
# OpenCode's parameter names -> Claude Code's (the others are already the same).
ARG_NAMES = {
    "filePath": "file_path",
    "oldString": "old_string",
    "newString": "new_string",
    "replaceAll": "replace_all",
}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def message_text(parts: Any) -> str:
    """The text of a message's parts: its non-synthetic text parts, joined by newlines."""
    if not isinstance(parts, list):
        return ""
    texts = [
        part["text"]
        for part in parts
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
        and part.get("synthetic") is not True
    ]
    return "\n".join(text for text in texts if text)


def tool_args(args: Any) -> Any:
    """Claude Code's parameter names for a built-in tool's arguments (others left alone).

    ``multiedit``'s ``edits`` are a list of edits with the same camelCase names
    (``oldString``…): each is renamed too, or the MultiEdit rule would find no edit in them.
    """
    if not isinstance(args, dict):
        return args
    out = {ARG_NAMES.get(key, key): value for key, value in args.items()}
    edits = out.get("edits")
    if isinstance(edits, list):
        out["edits"] = [tool_args(edit) if isinstance(edit, dict) else edit for edit in edits]
    return out


def tool_response(payload: dict[str, Any]) -> Any:
    """A built-in tool's ``output``; else an MCP tool's ``{content, isError}``; else None."""
    output = payload.get("output")
    content = payload.get("content")
    if output is not None or not isinstance(content, list):
        return output
    return {"content": content, "isError": payload.get("isError") is True}


def normalise(payload: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's field names for the plugin's payload (see the module docstring)."""
    out = dict(payload)
    name = _text(payload.get("hook_event_name"))
    out["hook_event_name"] = TO_NORMALISED.get(name, name)
    info = _dict(payload.get("info"))
    out["session_id"] = _text(payload.get("sessionID")) or _text(info.get("id"))
    out["cwd"] = _text(payload.get("directory")) or _text(info.get("directory"))
    parent = _text(payload.get("parentID"))
    if parent:  # a subagent's call: the parent's session, the child as the agent
        out["agent_id"] = out["session_id"]
        out["agent_type"] = "subagent"
        out["session_id"] = parent
    if name == "chat.message":
        out["prompt"] = message_text(payload.get("parts"))
    elif name == "session.idle":
        out["last_assistant_message"] = message_text(payload.get("parts"))
    elif name == "tool.execute.after":
        tool = _text(payload.get("tool"))
        out["tool_name"] = TOOL_NAMES.get(tool, tool)
        args = payload.get("args")
        out["tool_input"] = tool_args(args) if tool in TOOL_NAMES else args
        out["tool_response"] = tool_response(payload)
        out["tool_use_id"] = _text(payload.get("callID"))
    return out


def event_name(kind: str) -> str:
    """OpenCode's name for the normalised event ``kind`` (``session.created``…)."""
    return FROM_NORMALISED.get(kind, kind)
