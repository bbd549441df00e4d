"""Text helpers every rule shares: bounded windows, one-line shortening, line counts.

Claude Code's ``tool_response`` has no fixed shape: a dict whose keys depend on the tool and
the Claude Code version, a plain string (older versions, errors), a list of content blocks
(Task, MCP tools), or nothing. Everything here accepts ``Any``, never raises on odd shapes,
and reads at most a bounded window of huge outputs (head + tail: test summaries sit at the
end), so one 5 MB response costs no more than a small one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

HEAD_CHARS = 8_000
TAIL_CHARS = 24_000

# ``llmContent``: Gemini CLI's tool response (a string or a list of parts), for an event its
# hook adapter did not flatten (an older hook, a spool file).
_TEXT_KEYS = (
    "stdout", "stderr", "content", "result", "output", "text", "error", "message", "llmContent",
)  # fmt: skip
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DEF_STARTS = (
    "def ", "class ", "function ", "fn ", "func ", "interface ", "struct ", "enum ", "trait ",
    "async ", "export ", "pub ", "pub(", "default ",
)  # fmt: skip
_DEF = re.compile(
    r"(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|fn|func|interface|struct|enum|trait)\s+([A-Za-z_]\w*)"
)


def window(text: str) -> str:
    """Head and tail of a long text, which is all any rule reads."""
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]


def short(text: Any, limit: int = 80) -> str:
    """One line, whitespace collapsed, at most ``limit`` characters (``…`` when cut)."""
    raw = text if isinstance(text, str) else str(text or "")
    raw = raw[: limit * 4 + 16]  # collapsing only shrinks: never scan more than needed
    line = " ".join(raw.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line of a text, shortened (without splitting the whole text)."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        end = size if end < 0 else end
        if not text[start:end].isspace() and start < end:
            return short(text[start:end], limit)
        start = end + 1
    return ""


def first_sentences(text: str, count: int = 2, limit: int = 300) -> str:
    """The first ``count`` sentences of prose (markdown bullets and headings dropped)."""
    lines = [ln.strip().lstrip("#*->• ").strip() for ln in text[: limit * 8].splitlines()]
    prose = " ".join(ln for ln in lines if ln)
    parts = _SENTENCE_END.split(prose, maxsplit=count)
    return short(" ".join(parts[:count]), limit)


def as_dict(value: Any) -> dict[str, Any]:
    """A dict view of a payload: dicts as is, a JSON object string parsed, anything else ``{}``."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value[:1] == "{":
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def response_text(value: Any, depth: int = 0) -> str:
    """The human-readable text inside a tool response of any shape (windowed)."""
    if value is None or depth > 4:
        return ""
    if isinstance(value, str):
        return window(value)
    if isinstance(value, dict):
        parts = []
        inner = value.get("file")
        if isinstance(inner, dict):
            parts.append(response_text(inner.get("content"), depth + 1))
        for key in _TEXT_KEYS:
            if key in value:
                parts.append(response_text(value[key], depth + 1))
        return window("\n".join(p for p in parts if p))
    if isinstance(value, list):
        parts = []
        for item in value[:200]:
            if isinstance(item, dict) and "text" in item:
                parts.append(response_text(item["text"], depth + 1))
            elif isinstance(item, (str, dict, list)):
                parts.append(response_text(item, depth + 1))
        return window("\n".join(p for p in parts if p))
    if isinstance(value, bool):
        return ""
    return str(value)


def count_lines(text: str) -> int:
    """Lines in a text (a trailing newline does not start another)."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def definitions(code: str, limit: int = 8) -> list[str]:
    """Names of functions/classes/structs defined (indent ≤ 4) in the first 8,000 characters.

    Line by line with a ``startswith`` filter: a multiline regex over the whole text is
    about 2.5 times slower, and this runs on every Read.
    """
    names: dict[str, None] = {}
    for line in code[:HEAD_CHARS].splitlines():
        stripped = line.lstrip(" \t")
        if len(line) - len(stripped) <= 4 and stripped.startswith(_DEF_STARTS):
            match = _DEF.match(stripped)
            if match:
                names.setdefault(match.group(1), None)
                if len(names) >= limit:
                    break
    return list(names)


def dedupe(values: Iterable[str]) -> list[str]:
    """Non-empty values in first-seen order."""
    return list(dict.fromkeys(v for v in values if v))
