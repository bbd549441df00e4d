"""Strip private and injected blocks from text, and make text storable. Standard library only.

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
- ``redact_value`` applies this to every string of a JSON-like value, dict keys included (a
  key is as much text as a value: ``{"<private>token</private>": 1}`` must not keep it).

Text at the boundary: a lone UTF-16 surrogate (a tool output cut mid-emoji arrives as JSON
``"x \\ud83d"``) cannot be encoded as UTF-8, so SQLite, the spool and the HTTP body all refuse
it. The rule, applied where text enters (hook stdin, service request bodies, spool replay):
every lone surrogate becomes U+FFFD. ``may_hold_surrogates`` is the cheap byte-level test that
keeps the walk off the hot path when there is none.
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
    return _strip_blocks(text).strip()


def _strip_blocks(text: str) -> str:
    previous = None
    while previous != text:  # removing a block can re-form a tag around it: go again
        previous = text
        text = _remove(text, _block_spans(text))
    return text


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


# The deepest nesting of containers anything we store may have; the service refuses more with
# a 422 (``service.boundary.check_json``). Real tool payloads nest a handful of levels.
MAX_DEPTH = 128
ELIDED = f"[nested deeper than {MAX_DEPTH} levels: elided]"


def redact_value(
    value: Any, *, surrogates: bool = False, max_depth: int | None = None, _depth: int = 0
) -> Any:
    """Apply ``strip_private`` to every string inside a JSON-like value, dict keys included.

    A string with no block is returned exactly as it was (the indentation of ``a < b`` in an
    Edit's ``old_string`` is data); one that lost a block is trimmed, like ``strip_private``.
    With ``surrogates=True`` every lone surrogate is also replaced by U+FFFD (pass it when
    ``may_hold_surrogates`` said yes: the extra pass costs a regex per string).

    With ``max_depth`` (the hooks pass ``MAX_DEPTH``) a container that would sit at that depth
    or deeper (the value itself is depth 0) becomes the string ``ELIDED``: the event is kept,
    storable, and the walk can never run out of stack, instead of the whole event being
    refused for one absurdly nested tool output.
    """
    if isinstance(value, str):
        if surrogates:
            value = replace_surrogates(value)
        if "<" not in value:
            return value
        stripped = _strip_blocks(value)
        return value if stripped == value else stripped.strip()
    if not isinstance(value, (list, dict)):  # noqa: UP038 - a tuple is faster here
        return value
    if max_depth is not None and _depth >= max_depth:
        return ELIDED
    deeper = _depth + 1
    if isinstance(value, list):
        return [
            redact_value(v, surrogates=surrogates, max_depth=max_depth, _depth=deeper)
            for v in value
        ]
    return {
        redact_value(k, surrogates=surrogates): redact_value(
            v, surrogates=surrogates, max_depth=max_depth, _depth=deeper
        )
        for k, v in value.items()
    }


# A JSON escape of a surrogate (``\\ud83d``, any case), and one UTF-8-encoded the lenient way
# (``json.loads`` on bytes decodes with ``surrogatepass``): ED A0..BF. Kept as pattern text and
# compiled on first use (``re`` caches it): most hook runs never need them, and compiling all
# three at import would add ~0.3 ms to every hook's start-up.
_SURROGATE_ESCAPE = rb"\\u[dD][89abcdefABCDEF]"
_SURROGATE_UTF8 = rb"\xed[\xa0-\xbf]"
_SURROGATE = "[\ud800-\udfff]"


def may_hold_surrogates(raw: bytes) -> bool:
    """True when the JSON text ``raw`` may decode to a string holding a surrogate.

    Byte tests first (``\\u`` and ED are rare in JSON that does not escape non-ASCII), then a
    regex that starts with a literal, which ``re`` skips to quickly (~0.6 µs per KB). A valid
    pair also says yes; ``json.loads`` joins it into one character, so the walk changes nothing.
    """
    if b"\xed" in raw and re.search(_SURROGATE_UTF8, raw) is not None:
        return True
    return b"\\u" in raw and re.search(_SURROGATE_ESCAPE, raw) is not None


def replace_surrogates(text: str) -> str:
    """``text`` with each surrogate (only lone ones survive ``json.loads``) as U+FFFD."""
    return re.sub(_SURROGATE, "\ufffd", text) if re.search(_SURROGATE, text) else text
