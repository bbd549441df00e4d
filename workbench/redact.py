"""Strip private and injected blocks from text. Standard library only.

Used twice on purpose: by the hooks before anything leaves the agent's machine state, and by
the service before anything is stored, so a client that forgets (or an old spool file) still
cannot put private text into the memory.

Rules:
- ``<private>…</private>`` is the user's own marker for "never remember this".
- ``<workbench-context>`` is the fence around the context *we* inject; stripping it means an
  agent echoing its context back is never re-stored as new memory.
- ``<claude-mem-context>``, ``<system-reminder>``, ``<system_instruction>``,
  ``<system-instruction>`` and ``<persisted-output>`` are harness scaffolding, not user content.
- Tags may carry attributes; matching is non-greedy and needs the same closing tag; an unclosed
  tag is left alone (better to keep text than to eat the rest of a prompt); the result is trimmed.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # ``typing`` costs ~4 ms of hook start-up: imported for checkers only
if TYPE_CHECKING:
    from typing import Any

STRIPPED_TAGS = (
    "private",
    "workbench-context",
    "claude-mem-context",
    "system-reminder",
    "system_instruction",
    "system-instruction",
    "persisted-output",
)

_NAMES = "|".join(re.escape(t) for t in STRIPPED_TAGS)
# One opener (attributes allowed) or one closer of a stripped tag.
_TAG = re.compile(
    r"<(?:(?P<open>" + _NAMES + r")(?:\s[^<>]*)?|/(?P<close>" + _NAMES + r")\s*)>",
    re.IGNORECASE,
)
_TASK_NOTIFICATION = re.compile(
    r"^\s*<task-notification(?:\s[^<>]*)?>.*?</task-notification\s*>\s*$",
    re.DOTALL | re.IGNORECASE,
)


def strip_private(text: str) -> str:
    """Remove every stripped block (nested or repeated) and trim the result."""
    previous = None
    while previous != text:  # removing a block can re-form a tag around it: go again
        previous = text
        text = _remove(text, _block_spans(text))
    return text.strip()


def _block_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every closed block, pairing each closer with an opener of its tag.

    Openers nest (so ``<private>a <private>b</private> c</private>`` is one block and ``c``
    never leaks), and when a tag has more openers than closers the extra openers are taken
    as the innermost ones, so a closer ends the widest block it can: when in doubt, strip.
    A closer with no opener and an opener with no closer are ordinary text.
    """
    tokens = [
        (m.start(), m.end(), (m.group("open") or m.group("close")).lower(), bool(m["open"]))
        for m in _TAG.finditer(text)
    ]
    closers_left: dict[str, int] = {}
    for _, _, tag, is_open in tokens:
        if not is_open:
            closers_left[tag] = closers_left.get(tag, 0) + 1
    open_at: dict[str, list[int]] = {}
    spans = []
    for start, end, tag, is_open in tokens:
        stack = open_at.setdefault(tag, [])
        if is_open:
            stack.append(start)
            continue
        closers_left[tag] -= 1
        if stack:
            del stack[closers_left[tag] + 1 :]  # keep only openers a later closer can end
            spans.append((stack.pop(), end))
    return spans


def _remove(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the union of ``spans``."""
    out, pos = [], 0
    for start, end in sorted(spans):
        if start > pos:
            out.append(text[pos:start])
        pos = max(pos, end)
    out.append(text[pos:])
    return "".join(out)


def is_task_notification(text: str) -> bool:
    """True when a prompt is nothing but a ``<task-notification>`` block (harness chatter)."""
    return bool(_TASK_NOTIFICATION.match(text))


def redact_value(value: Any) -> Any:
    """Apply ``strip_private`` to every string inside a JSON-like value (tool inputs/outputs)."""
    if isinstance(value, str):
        return strip_private(value) if "<" in value else value
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value
