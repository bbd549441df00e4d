"""Gemini CLI (``~/.gemini/settings.json`` hooks): its events mapped to the normalised ones.

Source: google-gemini/gemini-cli ``docs/hooks/reference.md`` and
``packages/core/src/hooks/types.ts`` (commit 5411f113, Aug 2026). Every event carries
``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and ``timestamp``; then:

- SessionStart: ``source`` (startup / resume / clear); context through
  ``hookSpecificOutput.additionalContext``, as in Claude Code
- BeforeAgent (= UserPromptSubmit): ``prompt``; context as ``additionalContext`` too
- AfterTool (= PostToolUse): ``tool_name``, ``tool_input``, ``tool_response`` (an object with
  ``llmContent``, ``returnDisplay``, optional ``error``), ``mcp_context?``
- AfterAgent (= Stop): ``prompt``, ``prompt_response`` (the final answer, so no transcript is
  read: Gemini's transcript is one JSON document, not JSONL), ``stop_hook_active``
- SessionEnd: ``reason`` (exit / clear / logout / prompt_input_exit / other)

Gemini sends no tool-call id and no subagent id.

Tool calls are normalised too, so the compressors' rules (written for Claude Code's tools)
apply: a built-in tool whose parameters match a Claude Code tool takes its name (``read_file``
→ ``Read``, ``replace`` → ``Edit``, ``run_shell_command`` → ``Bash``, ``list_directory`` →
``LS``…; the names are in ``packages/core/src/tools/definitions/base-declarations.ts``). Every
tool's response, whatever its name (MCP ``mcp_<server>_<tool>`` too), becomes the text the
model saw, or ``"Error: <message>"`` when the tool failed: ``llmContent`` is a string (built-in
tools) or a list of parts (``[{"text": …}]``: MCP tools, Gemini 0.61), and ``returnDisplay``
(what the terminal showed) stands in when it has no text (issue 20, item 11: before, only the
renamed tools were read, and an MCP call or ``list_directory`` made no observation).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

PLATFORM_SOURCE = "gemini-cli"

# Gemini's event name -> the normalised (Claude Code) one, and back for the output.
TO_NORMALISED = {
    "BeforeAgent": "UserPromptSubmit",
    "AfterTool": "PostToolUse",
    "BeforeTool": "PreToolUse",
    "AfterAgent": "Stop",
}
FROM_NORMALISED = {value: key for key, value in TO_NORMALISED.items()}
# Gemini built-in tool -> the Claude Code tool with the same parameters (file_path, command…).
TOOL_NAMES = {
    "read_file": "Read",
    "write_file": "Write",
    "replace": "Edit",
    "run_shell_command": "Bash",
    "glob": "Glob",
    "grep_search": "Grep",
    "google_web_search": "WebSearch",
    "list_directory": "LS",  # ``dir_path``, which the LS rule reads beside ``path``
}


def tool_response(response: Any) -> Any:
    """The text the model saw, or ``Error: …``; anything not Gemini-shaped is left alone."""
    if not isinstance(response, dict) or not (
        "llmContent" in response or "returnDisplay" in response
    ):
        return response
    error = response.get("error")
    if isinstance(error, dict):
        error = error.get("message")
    if isinstance(error, str) and error:
        return "Error: " + error
    content = parts_text(response.get("llmContent"))
    if content:
        return content
    display = response.get("returnDisplay")
    return display if isinstance(display, str) and display else response


def parts_text(content: Any) -> str:
    """The text of ``llmContent``: a string, one part (``{"text": …}``) or a list of them;
    parts without text (``inlineData``: an image) are left out."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        text = content.get("text")
        return text if isinstance(text, str) else ""
    if isinstance(content, list):
        return "\n".join(t for t in (parts_text(p) for p in content) if t)
    return ""


def normalise(payload: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's field names; ``last_assistant_message`` from ``prompt_response``."""
    out = dict(payload)
    name = payload.get("hook_event_name")
    if isinstance(name, str):
        out["hook_event_name"] = TO_NORMALISED.get(name, name)
    answer = payload.get("prompt_response")
    out["last_assistant_message"] = answer if isinstance(answer, str) else ""
    tool = payload.get("tool_name")
    if isinstance(tool, str) and tool in TOOL_NAMES:
        out["tool_name"] = TOOL_NAMES[tool]
    if "tool_response" in payload:
        out["tool_response"] = tool_response(payload["tool_response"])
    return out


def event_name(kind: str) -> str:
    """Gemini's ``hookEventName`` for the normalised event ``kind`` (BeforeAgent…)."""
    return FROM_NORMALISED.get(kind, kind)
