"""Token estimates: ``ceil(chars / 4)``, the rule of thumb for English text and code.

One function so every figure agrees: what reading a memory back costs (search hits, context
footers, corpora, analytics) and what producing it cost (the offline compressor's
``discovery_tokens``, estimated over the raw tool call). Text counts its characters; a JSON
structure counts every key, string and scalar inside it, so a tool call is measured as the
model would have read it, without serialising it first.
"""

from __future__ import annotations

import math
from typing import Any

MAX_DEPTH = 20  # deeper than any real tool payload; bounds the walk on hostile input


def estimate_tokens(*values: Any) -> int:
    """Estimated tokens of ``values`` together (0 for none, ``None`` or empty text)."""
    return math.ceil(sum(_chars(v, 0) for v in values) / 4)


def _chars(value: Any, depth: int) -> int:
    if isinstance(value, str):
        return len(value)
    if value is None or depth > MAX_DEPTH:
        return 0
    if isinstance(value, dict):
        return sum(len(str(k)) + _chars(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(_chars(v, depth + 1) for v in value)
    return len(str(value))
