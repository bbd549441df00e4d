"""Token estimates: ``ceil(chars / 4)``, the rule of thumb for English text and code.

One function so every figure (search hits, context footers, corpora, analytics) agrees.
"""

from __future__ import annotations

import math


def estimate_tokens(text: str | None) -> int:
    """Estimated tokens of ``text`` (0 for empty)."""
    return math.ceil(len(text) / 4) if text else 0
