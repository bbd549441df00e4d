"""Tool calls waiting for their result, kept across reads of one transcript file.

Claude Code (``tool_use`` then ``tool_result``) and Codex (``function_call`` then its
``..._output``) both write a call and its result on different lines, which a watcher may read
in different rounds. So each parser keeps the waiting calls in its JSON state: here they are
read back from that state (anything but a dict is dropped) and kept bounded, so a log full of
calls that never got a result cannot grow the state without end.
"""

from __future__ import annotations

from typing import Any

MAX_PENDING = 500  # tool calls waiting for a result; the oldest are dropped past this


def restore(state: dict[str, Any]) -> dict[str, list[Any]]:
    """The waiting calls saved in a parser's state (call id -> what the parser kept of it)."""
    pending = state.get("pending")
    return pending if isinstance(pending, dict) else {}


def bound(pending: dict[str, list[Any]]) -> None:
    """Drop the oldest waiting calls until at most ``MAX_PENDING`` are left."""
    while len(pending) > MAX_PENDING:
        pending.pop(next(iter(pending)))
