"""The event a transcript line becomes, and a line's bytes read as one JSON object.

``TranscriptEvent`` is deliberately the hooks' vocabulary: a ``prompt`` is what
UserPromptSubmit sends, a ``tool`` call what PostToolUse sends, a ``stop`` what Stop sends
(the turn's last assistant text). The importer hands each to the same ``Ingestor`` method.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from workbench.redact import MAX_DEPTH, may_hold_surrogates, replace_surrogates

Kind = Literal["prompt", "tool", "stop"]


@dataclass(frozen=True)
class TranscriptEvent:
    """One event read from a transcript; ``key`` is its idempotency key in the events log."""

    kind: Kind
    session_id: str
    cwd: str
    key: str
    at_ms: int | None = None
    text: str = ""  # the prompt, or the turn's last assistant message
    tool_name: str = ""
    tool_input: Any = None
    tool_response: Any = None
    tool_use_id: str | None = None
    agent_id: str | None = None


def parse_line(data: bytes) -> dict[str, Any] | None:
    """The JSON object on one line, or None (not JSON, not an object, or not storable).

    Bytes that are not UTF-8 become U+FFFD rather than losing the line; a lone surrogate
    written as an escape (``\\ud83d``: an output cut mid-emoji) becomes U+FFFD too, because
    SQLite cannot store it. Not storable, as at the hook routes' boundary: ``NaN``,
    ``Infinity`` or a number too large for a float (the store's ``json_valid`` refuses
    them, and a silent null would change what the tool said), and nesting deeper than
    ``redact.MAX_DEPTH``.
    """
    # The walk that replaces surrogates only when the bytes may hold one (a byte scan).
    hook = _clean_keys if may_hold_surrogates(data) else None
    try:
        found = json.loads(
            data.decode("utf-8", errors="replace"),
            object_hook=hook,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except (ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or _too_deep(found):
        return None
    return found


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} does not fit a float")
    return value


def _too_deep(value: Any) -> bool:
    """True when containers nest deeper than ``MAX_DEPTH`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def _clean_keys(obj: dict[str, Any]) -> dict[str, Any]:
    return {replace_surrogates(k): _clean(v) for k, v in obj.items()}


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def epoch_ms(value: Any) -> int | None:
    """An ISO timestamp (``2026-12-04T19:01:29.040Z``) in epoch ms; None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        return None
    return int(stamp.timestamp() * 1000)


def text(value: Any) -> str:
    """A string field, or "" when the line holds something else there."""
    return value if isinstance(value, str) else ""
