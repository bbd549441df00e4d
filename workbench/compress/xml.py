"""The strict-but-forgiving parser for the XML blocks Claude is asked to reply with.

Why not ``xml.etree``: model replies are *almost* XML. They carry prose around the blocks,
unescaped ``<`` and ``&`` inside text, code fences, missing closing tags when ``max_tokens``
cuts a reply short. A real XML parser rejects the whole reply for one stray ``&``; here each
block and each field is found on its own, so one bad field costs that field, not the reply.

Rules (each has a test in ``tests/test_compress_xml.py``):
- A reply wholly wrapped in a ````` fence (```` ```xml ````) is unwrapped; prose outside
  ``<observation>`` / ``<summary>`` blocks is discarded.
- Tag names match case-insensitively and may carry attributes. A block that is never closed
  ends where the next block starts, or at the end of the reply (a truncated reply keeps what it
  has). A field that is never closed ends at the next known field tag.
- Text is unescaped (``&amp;`` ``&lt;`` ``&#39;`` …) and ``<![CDATA[…]]>`` is unwrapped;
  single-line fields (type, title, subtitle, concepts, files) have whitespace collapsed.
- ``<type>`` is lowercased; ``security alert`` / ``security-alert`` become the known
  ``security_alert``; other unknown types are kept as given (lowercased); a missing type is
  ``discovery``.
- A list field with ``<fact>``/``<concept>``/``<file>`` children uses them; without children its
  text is split into lines (leading ``-``/``*``/``•`` bullets removed).
- A concept written ``concept: description`` keeps only the tag before the colon, lowercased.
- An observation with no title, no narrative and no facts is dropped; one with no title gets
  the first sentence of its narrative (or its first fact), at most 120 characters.
- ``parse_summary`` returns ``None`` when there is no ``<summary>`` block, when the block is
  empty, or when the reply says ``<skip_summary …/>``.
- Nothing here raises on any input string, and every scan is linear in the reply's length.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from workbench.models import OBSERVATION_TYPES, ObservationDraft, SummaryDraft

OBSERVATION_FIELDS = (
    "type",
    "title",
    "subtitle",
    "facts",
    "narrative",
    "concepts",
    "files_read",
    "files_modified",
)
SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes")
_SUMMARY_FILE_FIELDS = ("files_read", "files_edited", "files_modified")

_FENCE = re.compile(r"\A\s*```[\w+-]*[ \t]*\n(?P<body>.*?)\n?```\s*\Z", re.DOTALL)
_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)
_SPACE = re.compile(r"\s+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_TAG_NAME_END = frozenset(" \t\r\n>/")
_TITLE_MAX = 120


def parse_observations(text: str) -> list[ObservationDraft]:
    """Every usable ``<observation>`` block of a reply, in order (possibly none)."""
    if not isinstance(text, str) or not text:
        return []
    text = unwrap_fence(text)
    drafts = []
    for block in _blocks(text, "observation"):
        draft = _observation(block)
        if draft is not None:
            drafts.append(draft)
    return drafts


def parse_summary(text: str) -> SummaryDraft | None:
    """The first ``<summary>`` block of a reply, or ``None`` when there is nothing to keep."""
    if not isinstance(text, str) or not text:
        return None
    text = unwrap_fence(text)
    if _find_open(text.lower(), "skip_summary", 0) is not None:
        return None
    for block in _blocks(text, "summary"):
        fields = _Fields(block, SUMMARY_FIELDS + _SUMMARY_FILE_FIELDS)
        values = {name: fields.text(name) for name in SUMMARY_FIELDS}
        files_read = fields.items("files_read", "file")
        files_edited = fields.items("files_edited", "file") or fields.items(
            "files_modified", "file"
        )
        if any(values.values()) or files_read or files_edited:
            return SummaryDraft(**values, files_read=files_read, files_edited=files_edited)
    return None


def unwrap_fence(text: str) -> str:
    """The body of a reply that is one fenced code block, else the reply unchanged."""
    match = _FENCE.match(text)
    return match.group("body") if match else text


def clean(text: str, *, one_line: bool = False) -> str:
    """Unwrap CDATA, unescape entities, trim (and collapse whitespace for one-line fields)."""
    if "<![CDATA[" in text:
        text = _CDATA.sub(lambda m: m.group(1), text)
    if "&" in text:
        text = html.unescape(text)
    if one_line:
        return _SPACE.sub(" ", text).strip()
    return text.strip()


def normalize_type(raw: str) -> str:
    """Lowercase a type; map spelling variants of known types; keep unknown ones as given."""
    value = clean(raw, one_line=True).lower()
    if not value:
        return "discovery"
    variant = re.sub(r"[\s-]+", "_", value)
    return variant if variant in OBSERVATION_TYPES else value


def concept_tag(raw: str) -> str:
    """``"gotcha: the cache is per process"`` → ``"gotcha"``."""
    return clean(raw, one_line=True).split(":", 1)[0].strip().lower()


# ----- block and field scanning ------------------------------------------------------------
def _find_open(lowered: str, tag: str, start: int) -> tuple[int, int] | None:
    """(start, end) of the next ``<tag …>`` opener at or after ``start`` in lowercased text."""
    needle = "<" + tag
    pos = lowered.find(needle, start)
    while pos >= 0:
        after = pos + len(needle)
        if after == len(lowered) or lowered[after] in _TAG_NAME_END:
            close = lowered.find(">", after)
            if close < 0:
                return None
            return pos, close + 1
        pos = lowered.find(needle, after)
    return None


def _blocks(text: str, tag: str) -> list[str]:
    """Bodies of ``<tag>…</tag>`` blocks; an unclosed block ends at the next opener or the end."""
    lowered = text.lower()
    closer = "</" + tag
    bodies = []
    pos = 0
    while (opener := _find_open(lowered, tag, pos)) is not None:
        body_start = opener[1]
        next_open = _find_open(lowered, tag, body_start)
        limit = next_open[0] if next_open else len(text)
        end = lowered.find(closer, body_start, limit)
        if end < 0:
            bodies.append(text[body_start:limit])
            pos = limit
        else:
            bodies.append(text[body_start:end])
            close = lowered.find(">", end, limit)
            pos = close + 1 if close >= 0 else limit
    return bodies


class _Fields:
    """The first occurrence of each known field tag in one block, found in one pass per tag."""

    def __init__(self, block: str, names: tuple[str, ...]) -> None:
        self.block = block
        self.lowered = block.lower()
        self.names = names
        self._openers = {name: _find_open(self.lowered, name, 0) for name in names}

    def raw(self, name: str) -> str | None:
        opener = self._openers.get(name)
        if opener is None:
            return None
        body_start = opener[1]
        end = self.lowered.find("</" + name, body_start)
        if end < 0:  # unclosed: stop at the next known field that starts later
            later = [o[0] for o in self._openers.values() if o is not None and o[0] > body_start]
            end = min(later) if later else len(self.block)
        return self.block[body_start:end]

    def text(self, name: str, *, one_line: bool = False) -> str:
        raw = self.raw(name)
        return clean(raw, one_line=one_line) if raw is not None else ""

    def items(self, name: str, child: str) -> list[str]:
        raw = self.raw(name)
        if raw is None:
            return []
        values = _children(raw, child)
        if values is None:  # no child tags: one item per non-empty line
            values = [_BULLET.sub("", line) for line in raw.splitlines()]
        cleaned = (clean(v, one_line=True) for v in values)
        return _dedupe(v for v in cleaned if v)


def _children(section: str, child: str) -> list[str] | None:
    """Bodies of ``<child>`` elements of a section, or ``None`` when it has none."""
    lowered = section.lower()
    closer = "</" + child
    found: list[str] = []
    pos = 0
    while (opener := _find_open(lowered, child, pos)) is not None:
        body_start = opener[1]
        next_open = _find_open(lowered, child, body_start)
        limit = next_open[0] if next_open else len(section)
        end = lowered.find(closer, body_start, limit)
        found.append(section[body_start : end if end >= 0 else limit])
        pos = limit if end < 0 else end + len(closer)
    return found if found else None


def _observation(block: str) -> ObservationDraft | None:
    fields = _Fields(block, OBSERVATION_FIELDS)
    title = fields.text("title", one_line=True)
    narrative = fields.text("narrative")
    facts = fields.items("facts", "fact")
    if not (title or narrative or facts):
        return None
    concepts = _dedupe(
        t for t in (concept_tag(c) for c in fields.items("concepts", "concept")) if t
    )
    return ObservationDraft(
        type=normalize_type(fields.text("type")),
        title=title or _first_sentence(narrative or facts[0]),
        subtitle=fields.text("subtitle", one_line=True),
        narrative=narrative,
        facts=facts,
        concepts=concepts,
        files_read=fields.items("files_read", "file"),
        files_modified=fields.items("files_modified", "file"),
    )


def _first_sentence(text: str) -> str:
    line = _SPACE.sub(" ", text).strip()
    first = _SENTENCE_END.split(line, maxsplit=1)[0]
    return first if len(first) <= _TITLE_MAX else first[: _TITLE_MAX - 1].rstrip() + "…"


def _dedupe(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
