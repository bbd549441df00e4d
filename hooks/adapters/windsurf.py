"""Windsurf (Cascade hooks, ``~/.codeium/windsurf/hooks.json``): its events mapped to ours.

Source: Windsurf's "Cascade Hooks" page, https://docs.windsurf.com/windsurf/cascade/hooks
(Windsurf is closed source; the page is the only primary source). Every payload is
``{"agent_action_name", "trajectory_id", "execution_id", "timestamp", "tool_info": {...}}``:
``trajectory_id`` names the Cascade conversation (our session), ``execution_id`` one agent
turn. The events workbench registers, and their ``tool_info``:

- ``pre_user_prompt`` (= UserPromptSubmit): ``user_prompt``
- ``post_read_code`` (= PostToolUse ``Read``): ``file_path`` (maybe a directory); no content
- ``post_write_code`` (= PostToolUse ``Edit``/``MultiEdit``/``Write``): ``file_path``,
  ``edits`` (``[{"old_string", "new_string"}]``)
- ``post_run_command`` (= PostToolUse ``Bash``): ``command_line``, ``cwd``; no output
- ``post_mcp_tool_use`` (= PostToolUse ``mcp__<server>__<tool>``): ``mcp_server_name``,
  ``mcp_tool_name``, ``mcp_tool_arguments``, ``mcp_result``
- ``post_cascade_response`` (= Stop, run asynchronously): ``response``, the markdown of
  everything Cascade did and said since the last user input: it is the turn's answer

No payload has a general ``cwd``: a hook runs in its ``working_directory``, which defaults to
the workspace root (the root of the repo being worked on in a multi-repo workspace), so that
is the cwd, unless ``tool_info.cwd`` names the command's own. There is no session start or
end event, no tool-call id and no subagent id.

Output: exit code 0 lets every action proceed (2 would block a pre-hook and show stderr to
the model); stdout is read by nobody, only shown in the Cascade UI when the hook entry has
``show_output: true`` (``workbench install`` writes ``false``). So Windsurf has **no context
injection through hooks**. The memory goes where the docs say Cascade reads standing
context: a workspace rule, ``.windsurf/rules/workbench-context.md`` with the activation mode
``trigger: always_on`` ("Memories & Rules", https://docs.windsurf.com/windsurf/cascade/memories:
rules in ``.windsurf/rules``, activation ``always_on``, 12000 characters per rule file).
``hooks/context_file.py`` (for any adapter with a ``CONTEXT_FILE``) refreshes it after each
Cascade response (``post_cascade_response``); Cascade sees it from the next prompt on.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

PLATFORM_SOURCE = "windsurf"

# Windsurf's agent_action_name -> the normalised (Claude Code) event name.
TO_NORMALISED = {
    "pre_user_prompt": "UserPromptSubmit",
    "post_read_code": "PostToolUse",
    "post_write_code": "PostToolUse",
    "post_run_command": "PostToolUse",
    "post_mcp_tool_use": "PostToolUse",
    "post_cascade_response": "Stop",
}
FROM_NORMALISED = {
    "UserPromptSubmit": "pre_user_prompt",
    "Stop": "post_cascade_response",
}

# The workspace rule that carries the memory (see the module docstring); written by
# ``hooks/context_file.py``, which never overwrites a file of that name not begun by our head.
CONTEXT_FILE = ".windsurf/rules/workbench-context.md"
RULE_HEAD = "---\ntrigger: always_on\n---\n"
CONTEXT_MARK = "<!-- workbench-context: rewritten by workbench after each Cascade response -->"
# How every file we write begins; one that does not is the user's, even if it quotes the mark.
CONTEXT_HEAD = f"{RULE_HEAD}{CONTEXT_MARK}\n\n"
MAX_RULE_CHARS = 12_000  # Windsurf's limit per rule file
CUT_NOTE = "\n\n[cut to fit Windsurf's rule size; search workbench over MCP for more]\n"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def write_tool(info: dict[str, Any]) -> tuple[str, Any]:
    """``post_write_code`` as Claude Code's tool with the same parameters.

    One edit of nothing into something is a new file (``Write``: ``file_path``, ``content``);
    one edit is ``Edit`` (``file_path``, ``old_string``, ``new_string``); several are
    ``MultiEdit`` (``file_path``, ``edits``), as Claude Code names them.
    """
    path = info.get("file_path")
    edits = info.get("edits")
    edits = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else []
    if len(edits) == 1:
        old, new = edits[0].get("old_string"), edits[0].get("new_string")
        if old == "" and isinstance(new, str):
            return "Write", {"file_path": path, "content": new}
        return "Edit", {"file_path": path, "old_string": old, "new_string": new}
    return "MultiEdit", {"file_path": path, "edits": edits}


def tool_call(action: str, info: dict[str, Any]) -> tuple[str, Any, Any]:
    """(tool_name, tool_input, tool_response) for a ``post_*`` action; ``("", …)`` otherwise."""
    if action == "post_read_code":
        return "Read", {"file_path": info.get("file_path")}, ""
    if action == "post_write_code":
        name, tool_input = write_tool(info)
        return name, tool_input, ""
    if action == "post_run_command":
        return "Bash", {"command": info.get("command_line")}, ""
    if action == "post_mcp_tool_use":
        server, tool = _text(info.get("mcp_server_name")), _text(info.get("mcp_tool_name"))
        name = f"mcp__{server}__{tool}" if server or tool else "mcp"
        return name, info.get("mcp_tool_arguments"), info.get("mcp_result")
    return "", None, None


def normalise(payload: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's field names from Windsurf's envelope and its ``tool_info``."""
    info = payload.get("tool_info")
    info = info if isinstance(info, dict) else {}
    action = _text(payload.get("agent_action_name"))
    cwd = _text(info.get("cwd"))
    if not cwd:
        try:
            cwd = os.getcwd()  # the hook's working_directory: the workspace root by default
        except OSError:  # the folder was removed under us
            cwd = ""
    out: dict[str, Any] = {
        "hook_event_name": TO_NORMALISED.get(action, action),
        "session_id": _text(payload.get("trajectory_id")),
        "cwd": cwd,
        "prompt": info.get("user_prompt"),
        "last_assistant_message": _text(info.get("response")),
    }
    name, tool_input, tool_response = tool_call(action, info)
    if name:
        out.update(tool_name=name, tool_input=tool_input, tool_response=tool_response)
    return out


def event_name(kind: str) -> str:
    """Windsurf's ``agent_action_name`` for the normalised event ``kind``."""
    return FROM_NORMALISED.get(kind, kind)


def context_document(context: str) -> str:
    """The rule file's text: always-on front matter, our mark, the memory (cut to fit)."""
    head = CONTEXT_HEAD
    room = MAX_RULE_CHARS - len(head) - 1
    if len(context) > room:
        context = context[: room - len(CUT_NOTE)].rstrip() + CUT_NOTE
    return head + context.rstrip("\n") + "\n"
