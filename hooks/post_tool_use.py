"""PostToolUse hook: send one tool call (name, input, output) to the service as raw material.

This runs after every tool call (matcher ``*``), so it is the hot path of the whole system: it
only redacts and posts; skip rules, size limits and compression are the service's job, done
once, in the process that already has everything loaded. ``<private>`` and injected-context
blocks were stripped from every string and key of the payload when it was read
(``_runtime.parse_input``), so nothing private is sent or spooled. A call of workbench's own
MCP tools or of the agent's tool discovery is not posted at all (``workbench.own_tools``):
it is never a memory, and a saved memory is stored once, by ``save_memory`` itself.

Prints ``{}``. Fail-open: see ``hooks/_runtime.py``; exits 0 whatever happens.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime  # noqa: E402
from workbench import own_tools  # noqa: E402

HOOK = "PostToolUse"
ROUTE = "/api/sessions/observations"


def build_body(event: _runtime.HookInput) -> dict[str, Any]:
    """The sessions/observations body; optional keys appear only when the payload had them."""
    body: dict[str, Any] = {
        "contentSessionId": event.session_id,
        "tool_name": event.tool_name,
        "tool_input": event.tool_input,
        "tool_response": event.tool_response,
        "cwd": event.cwd,
    }
    if event.tool_use_id:
        body["tool_use_id"] = event.tool_use_id
    if event.agent_id:
        body["agentId"] = event.agent_id
    if event.agent_type:
        body["agentType"] = event.agent_type
    return body


def main() -> None:
    event = _runtime.read_input()
    if event is not None and own_tools.skip_reason(event.tool_name) is None:
        _runtime.deliver(HOOK, ROUTE, build_body(event))
    _runtime.emit()


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        _runtime.emit_fallback()
    sys.exit(0)
