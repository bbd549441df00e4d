"""Codex CLI (its native hooks): Claude-shaped events, the answer in the Stop payload.

Source: openai/codex ``codex-rs/hooks/src/schema.rs`` and
``codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json`` (commit bde5e187).
Every event carries ``session_id``, ``transcript_path`` (nullable), ``cwd``,
``hook_event_name``, ``model``, ``permission_mode``, and (not SessionStart) ``turn_id``; then:

- SessionStart: ``source``; context through ``hookSpecificOutput.additionalContext``
  (with ``hookEventName``), as in Claude Code
- UserPromptSubmit: ``prompt``; the same ``hookSpecificOutput`` for context
- PostToolUse: ``tool_name`` (``Bash``…), ``tool_input`` (``{"command": …}``),
  ``tool_response``, ``tool_use_id``
- Stop: ``stop_hook_active``, ``last_assistant_message`` (nullable). A stop with
  ``stop_hook_active`` is a re-entry caused by a Stop hook: a no-op, as in Claude Code.

- SessionEnd (Codex 0.171 and later): the session is over; ``install`` registers it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

PLATFORM_SOURCE = "codex-cli"


def normalise(payload: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's names already; a null answer or transcript becomes ``""``."""
    out = dict(payload)
    answer = payload.get("last_assistant_message")
    out["last_assistant_message"] = answer if isinstance(answer, str) else ""
    return out


def event_name(kind: str) -> str:
    """Codex answers with Claude Code's event names."""
    return kind
