"""Claude Code: the payload is the normalised shape already (ARCHITECTURE.md, hook contract).

Claude Code keeps the last answer in the transcript (JSONL), not in the Stop payload, so
``normalise`` leaves ``last_assistant_message`` out and ``hooks/stop.py`` reads the file.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

PLATFORM_SOURCE = "claude-code"


def normalise(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload itself: Claude Code's field names are the normalised ones.

    Any ``last_assistant_message`` key is dropped: for Claude Code the transcript is the
    source of the answer (``hooks/stop.py``), as it always was.
    """
    if "last_assistant_message" in payload:
        return {k: v for k, v in payload.items() if k != "last_assistant_message"}
    return payload


def event_name(kind: str) -> str:
    """The ``hookEventName`` to answer with for the normalised event ``kind``."""
    return kind
