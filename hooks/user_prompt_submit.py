"""UserPromptSubmit hook: open (or continue) the session and record the prompt, privacy first.

``<private>`` blocks and injected context are stripped here, before anything leaves this
process, so private text is never sent or spooled. A prompt that was *entirely* private is
still posted, with ``prompt: ""``: the service numbers prompts and decides how to mark a
private one, which it cannot do for a prompt it never heard of. A payload with no prompt
text (missing, not a string, or only whitespace) is posted with ``prompt: null``, which opens
the session without counting a prompt; sent as ``""`` it would read as private, and the
service would skip the rest of the session. A prompt that is only a ``<task-notification>``
block is harness chatter, not the user: nothing is sent.

Optional semantic injection (setting ``prompt_injection``, off by default): after the prompt
is posted, a redacted prompt of at least ``prompt_injection_min_chars`` characters is sent to
``GET /api/context/prompt``, and a non-empty reply is printed as
``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}``.
The settings are read here, with the stdlib (``locate.hook_setting``), so that when the
feature is off the hook makes no second request at all. That query is read-only: when it
fails there is simply no context, and nothing is spooled.

Prints ``{}`` otherwise, or the platform's own answer (``_runtime.answer``: Cursor's
``{"continue": true}``). Fail-open: see ``hooks/_runtime.py``; exits 0 whatever happens.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
CONTEXT_ROUTE = "/api/context/prompt"
CONTEXT_TIMEOUT_S = 1.5  # the user is waiting for the answer to this very prompt
MAX_QUERY_CHARS = 2000  # matches workbench.recall.prompt_context.MAX_QUERY_CHARS
DEFAULT_MIN_CHARS = 20


def build_body(event: _runtime.HookInput) -> dict[str, Any] | None:
    """The sessions/init body, or None when the prompt is only a task notification."""
    if redact.is_task_notification(event.prompt):
        return None
    prompt: str | None = redact.strip_private(event.prompt)
    if prompt and redact.is_task_notification(prompt):
        return None
    if not event.prompt_given:  # no text at all: not a private prompt (see above)
        prompt = None
    project, key = locate.project_identity(event.cwd)
    return {
        "contentSessionId": event.session_id,
        "project": project,
        "projectKey": key,
        "prompt": prompt,
        "platformSource": event.platform_source,
    }


def wants_injection(root: Path, prompt: str) -> bool:
    """True when ``prompt_injection`` is on and the (redacted) prompt is long enough."""
    if not locate.parse_flag(locate.hook_setting(root, "prompt_injection"), False):
        return False
    raw = locate.hook_setting(root, "prompt_injection_min_chars")
    return len(prompt.strip()) >= max(locate.parse_count(raw, DEFAULT_MIN_CHARS), 1)


def related_context(root: Path, body: dict[str, Any]) -> str:
    """Memories related to the prompt (``""`` when none, or when the service cannot answer)."""
    return _runtime.get_text(
        _runtime.service_port(root),
        CONTEXT_ROUTE,
        {
            "query": body["prompt"][:MAX_QUERY_CHARS],
            "project": body["project"],
            "project_key": body["projectKey"],
            "contentSessionId": body["contentSessionId"],
        },
        total_timeout=CONTEXT_TIMEOUT_S,
    )


def output_for(context: str, event_name: str = HOOK) -> dict[str, Any]:
    """Claude Code's shape, which Gemini CLI (as BeforeAgent) and Codex CLI share."""
    if not context:
        return {}
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": context}}


def main() -> None:
    event = _runtime.read_input()
    body = build_body(event) if event is not None else None
    context = ""
    if event is not None and body is not None:
        root = _runtime.data_dir()
        outcome = _runtime.deliver(HOOK, ROUTE, body, root)
        # Trigger: the prompt reached the service and injection is on. / Why: a spooled
        # prompt means the service is down, and a second request would only wait out its
        # timeout. / Outcome: one read-only GET, or none.
        # A platform without context on stdout (Windsurf) gets none here: its rule file holds
        # the session's memory, and this hook blocks the prompt while it runs.
        if (
            outcome == "delivered"
            and body["prompt"]
            and _runtime.context_on_stdout(event)
            and wants_injection(root, body["prompt"])
        ):
            context = related_context(root, body)
    output = output_for(context, event.answer_event(HOOK) if event else HOOK)
    _runtime.emit(_runtime.answer(HOOK, output, event))


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        _runtime.emit_fallback(HOOK)
    sys.exit(0)
