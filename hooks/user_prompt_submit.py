"""UserPromptSubmit hook: open (or continue) the session and record the prompt, privacy first.

``<private>`` blocks and injected context are stripped here, before anything leaves this
process, so private text is never sent or spooled. A prompt that was *entirely* private is
still posted, with ``prompt: ""``: the service numbers prompts and decides how to mark a
private one, which it cannot do for a prompt it never heard of. A prompt that is only a
``<task-notification>`` block is harness chatter, not the user: nothing is sent.

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
from workbench import locate, redact  # noqa: E402

HOOK = "UserPromptSubmit"
ROUTE = "/api/sessions/init"


def build_body(event: _runtime.HookInput) -> dict[str, Any] | None:
    """The sessions/init body, or None when the prompt is only a task notification."""
    if redact.is_task_notification(event.prompt):
        return None
    prompt = redact.strip_private(event.prompt)
    if prompt and redact.is_task_notification(prompt):
        return None
    return {
        "contentSessionId": event.session_id,
        "project": locate.project_from_cwd(event.cwd),
        "prompt": prompt,
        "platformSource": _runtime.PLATFORM_SOURCE,
    }


def main() -> None:
    event = _runtime.read_input()
    body = build_body(event) if event is not None else None
    if body is not None:
        _runtime.deliver(HOOK, ROUTE, body)
    _runtime.emit()


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        pass
    sys.exit(0)
