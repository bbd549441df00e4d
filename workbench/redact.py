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
- ``<hook_context>`` is Gemini CLI's wrapper around what hooks inject (ours included); it is
  never what the user typed.
- A tag counts in any escaping its ``<`` and ``>`` come back in (issue 20, item 10: Gemini's
  ``-p`` mode hands our context back inside the prompt as ``&lt;workbench-context&gt;``): HTML
  entities (``&lt;``, also escaped again as ``&amp;lt;``), numeric ones (``&#60;``,
  ``&#x3c;``), JSON-escaped text (``\\u003c``, any number of backslashes), in any case,
  mixed. An escaped opening tag's attributes hold no ``&`` or backslash (``ESCAPED_LT``).
- Tags may carry attributes; matching is non-greedy and needs the same closing tag; an unclosed
  tag is left alone (better to keep text than to eat the rest of a prompt); the result is trimmed.
- Removing a block can re-form a tag around it (``<pri<private>x</private>vate>y</private>``):
  that block goes too, for two levels; a text that re-forms tags deeper than that (only a
  crafted one does) loses everything from its first remaining opening tag on. Redaction is
  linear in the text: a few regex scans, never one per nesting level.
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
from collections import deque

TYPE_CHECKING = False  # ``typing`` costs ~4 ms of hook start-up: imported for checkers only
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

STRIPPED_TAGS = (
    "private",
    "workbench-context",
    "claude-mem-context",
    "system-reminder",
    "system_instruction",
    "system-instruction",
    "persisted-output",
    "hook_context",
)

_NAMES = "|".join(re.escape(t) for t in STRIPPED_TAGS)
# ``<`` and ``>`` escaped, as matched in the lowercased text (``_scannable``): an HTML entity
# (named, maybe itself escaped as ``&amp;lt;``; decimal or hex, zero-padded) or a JSON escape
# written out as text (``\u003c``, ``\\u003c``…: a JSON opening tag is found at the last
# backslash of its run, then takes in the rest of the run, ``_openers``).
_ENTITY_LT = r"&(?:amp;)*(?:lt|#0*60|#x0*3c);"
_JSON_LT = r"\\u003c"
ESCAPED_GT = r"(?:&(?:amp;)*(?:gt|#0*62|#x0*3e);|\\+u003e)"
_ANY_GT = "(?:>|" + ESCAPED_GT + ")"
# What may start a tag: ``<``, or the first character of an escaped one.
_TAG_STARTS = "<&\\"
# One opening tag (attributes allowed) of a stripped tag, one pattern per way its ``<`` is
# written (plain, entity, JSON); group 1 is the tag's name. Each starts with a literal, which
# ``re`` skips ahead to in C: one pattern with the three as alternatives is tried at every
# position of the text, ~100 times slower. An escaped one's attributes stop at ``&`` and
# ``\`` as a plain one's stop at ``<``: each attribute scan then ends before the next opener of
# its kind, so the scans stay linear in the text. Kept as pattern text, compiled on first use
# (``re`` caches it): a hook whose payload holds no tag never needs them, and compiling them
# all at import would cost ~1 ms of its start-up.
_PLAIN_OPENER = "<(" + _NAMES + r")(?:\s[^<>]*)?>"
_OPENER_TEXTS = (
    _PLAIN_OPENER,
    _ENTITY_LT + "(" + _NAMES + r")(?:\s[^<>&\\]*)?" + ESCAPED_GT,
    _JSON_LT + "(" + _NAMES + r")(?:\s[^<>&\\]*)?" + ESCAPED_GT,
)
_JSON_OPENER = _OPENER_TEXTS[2]


def _closer_texts(tag: str) -> tuple[str, ...]:
    """The closing tag of ``tag``, one pattern per way its ``<`` is written; its ``/`` may be
    JSON's ``\\/`` and its ``>`` escaped too."""
    rest = r"\\*/" + re.escape(tag) + r"\s*" + _ANY_GT
    return ("<" + rest, _ENTITY_LT + rest, _JSON_LT + rest)


_TAG_INDEX = {t: i for i, t in enumerate(STRIPPED_TAGS)}
# Scanning a lowercased copy case-sensitively is ~5x faster than matching case-insensitively
# (which tries every spelling at each ``<``), and finds the same tags at the same positions
# unless the text holds a character whose lowercase is longer (only U+0130) or that ``re``
# folds onto an ASCII letter of a tag name without ``lower()`` doing so (U+0131, U+017F;
# U+212A, the Kelvin sign, lowercases to "k" and needs nothing).
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f")
_TASK_NOTIFICATION = re.compile(
    r"^\s*<task-notification(?:\s[^<>]*)?>.*?</task-notification\s*>\s*$",
    re.DOTALL | re.IGNORECASE,
)


def strip_private(text: str) -> str:
    """Remove every stripped block (nested or repeated) and trim the result."""
    return _strip_blocks(text).strip()


# Passes of block removal before the rest is cut (``_strip_blocks``). Two settle every text a
# person writes, and the one-level re-formed tag (``<pri<private>x</private>vate>``) too.
PASSES = 2


def _strip_blocks(text: str) -> str:
    """``text`` without its blocks, in at most ``PASSES + 1`` linear scans.

    Removing a block can re-form a tag around it (``<pri<private>x</private>vate>`` leaves
    ``<private>``), and removing that one can re-form another: the old fixpoint loop (remove,
    scan again, until nothing changes) took one pass per level, quadratic in the text, and a
    crafted 60 KB tool output outlasted a hook's timeout. So: ``PASSES`` passes; if a pass
    after them would still find a block, the text is cut at ``_safe_cut``, which drops
    everything any later pass could have touched (when in doubt, strip). What is kept is then
    always a prefix of what the fixpoint would have kept, and holds no opening tag at all.
    """
    for _ in range(PASSES):
        spans = _block_spans(text)
        if not spans:
            return text
        text = _remove(text, spans)
    return text if not _block_spans(text) else text[: _safe_cut(text)]


def _safe_cut(text: str) -> int:
    """Where to cut ``text`` (which still holds a block) so no later pass could reach before.

    Every later pass removes only from an opening tag on, and a tag that re-forms at such a
    removal starts at a tag start (``<``, or the ``&`` or backslash of an escaped one) with no
    ``>`` between it and the removal point (an escaped opening tag holds none). So nothing
    before the first tag start that follows the last ``>`` before the first opening tag can
    ever change: that character is the cut (the opening tag itself starts with one).
    """
    scanned, flags = _scannable(text)
    first = min((start for start, _ in _openers(scanned, flags)), default=None)
    if first is None:  # cannot be (a block has an opening tag); were it so, keep nothing
        return 0
    after = scanned.rfind(">", 0, first) + 1
    starts = (scanned.find(ch, after, first + 1) for ch in _TAG_STARTS)
    return min((at for at in starts if at >= 0), default=first)


def _block_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every closed block, pairing each closer with an opener of its tag.

    Openers nest (so ``<private>a <private>b</private> c</private>`` is one block and ``c``
    never leaks), and when a tag has more openers than closers the extra openers are taken
    as the innermost ones, so a closer ends the widest block it can: when in doubt, strip.
    A closer with no opener and an opener with no closer are ordinary text.

    Three regex scans find the openers (one per writing of ``<``); closers are then searched
    for per tag, only while an opener of that tag is open, so a text of a million stray
    closers costs a few C-level scans and no Python work per closer.
    """
    scanned, flags = _scannable(text)
    openers: dict[int, list[int]] = {}
    for start, name in _openers(scanned, flags):
        openers.setdefault(_tag_index(name), []).append(start)
    spans: list[tuple[int, int]] = []
    for tag, starts in openers.items():
        closers = _Closers(STRIPPED_TAGS[tag], flags)
        spans += _tag_spans(scanned, sorted(starts), closers)
    return spans


def _openers(scanned: str, flags: int) -> Iterator[tuple[int, str]]:
    """(start, tag name as written) of every opening tag, each writing in its own scan."""
    for pattern in _OPENER_TEXTS:
        for m in re.finditer(pattern, scanned, flags):
            start = m.start()
            if pattern is _JSON_OPENER:  # found at its run's last backslash: take in the run
                while start and scanned[start - 1] == "\\":
                    start -= 1
            yield start, m[1]


class _Closers:
    """The closing tags of one tag in text order, whichever way each is written.

    Each writing is searched for on its own (a literal prefix ``re`` skips to) and the
    nearest answered. A writing's next closer is kept until the search passes it, and the
    search only moves forward (``_tag_spans``), so each closer is found once: linear.
    """

    __slots__ = ("_patterns", "_found", "_done")

    def __init__(self, tag: str, flags: int) -> None:
        self._patterns = [re.compile(p, flags) for p in _closer_texts(tag)]
        self._found: list[re.Match[str] | None] = [None] * len(self._patterns)
        self._done = [False] * len(self._patterns)  # none of this writing is left

    def search(self, text: str, pos: int) -> re.Match[str] | None:
        """The first closer at or after ``pos`` (``pos`` never goes back between calls)."""
        best: re.Match[str] | None = None
        for i, pattern in enumerate(self._patterns):
            if self._done[i]:
                continue
            found = self._found[i]
            if found is None or found.start() < pos:
                found = self._found[i] = pattern.search(text, pos)
                self._done[i] = found is None
            if found is not None and (best is None or found.start() < best.start()):
                best = found
        return best


def _tag_index(name: str) -> int:
    """Which stripped tag ``name`` (as matched, in any case) is."""
    index = _TAG_INDEX.get(name.lower())
    if index is not None:
        return index
    # ``re`` folds a few letters ``lower()`` does not (``<PRıVATE>``): ask it.
    return next(i for i, t in enumerate(STRIPPED_TAGS) if re.fullmatch(t, name, re.IGNORECASE))


def _scannable(text: str) -> tuple[str, int]:
    """The text to scan for tags and the flags to scan it with: lowercased when that is
    exact (see ``_FOLDS_TO_ASCII``), else the text itself, matched case-insensitively."""
    if text.isascii() or not any(c in text for c in _FOLDS_TO_ASCII):
        return text.lower(), 0
    return text, re.IGNORECASE


def _tag_spans(text: str, starts: list[int], closer: _Closers) -> list[tuple[int, int]]:
    """The blocks of one tag whose openers start at ``starts``: the pairing rule above.

    A closer with ``left`` closers after it keeps only the ``left + 1`` outermost open
    openers (the rest are inner extras no later closer could end) and ends the innermost of
    those. ``left`` matters only when it is smaller than the open openers, so the closers
    ahead are counted only that far (``ahead``), never to the end of the text.
    """
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    ahead: deque[re.Match[str]] = deque()  # closers found past the current one, in order
    scan = starts[0]  # where the next search for a closer begins
    i = 0
    while True:
        if ahead:
            m = ahead.popleft()
        else:
            found = closer.search(text, scan)
            if found is None:
                break
            m, scan = found, found.end()
        while i < len(starts) and starts[i] < m.start():
            stack.append(starts[i])
            i += 1
        if not stack:  # a stray closer; skip to the next opener, if there is one
            if i == len(starts):
                break
            while ahead and ahead[0].start() < starts[i]:
                ahead.popleft()
            scan = max(scan, starts[i])
            continue
        need = len(stack) - 1
        while len(ahead) < need and (found := closer.search(text, scan)) is not None:
            ahead.append(found)
            scan = found.end()
        del stack[len(ahead) + 1 :]  # a no-op unless fewer closers are left than openers
        spans.append((stack.pop(), m.end()))
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


def may_hold_tag(text: str) -> bool:
    """False when ``text`` cannot hold a stripped tag, plain or escaped (the cheap test)."""
    return "<" in text or "&" in text or "003" in text  # ``\u003c`` in either case


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
        if not may_hold_tag(value):
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
