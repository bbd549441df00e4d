"""Stop hook: hand the agent's last answer to the service so it can summarise the prompt.

Gemini CLI and Codex CLI put the answer in the payload (their adapters fill
``last_assistant_message``). Claude Code does not: it lives in the transcript (JSONL, one
entry per line), as the last ``"type": "assistant"`` line, whose ``message.content`` is a
list of blocks (the text is in the ``"text"`` ones) or, in older versions, a plain string.
Claude Code writes each content block of one API message as its own line sharing
``message.id``, so adjacent lines of that same message are joined too.

Transcripts grow to many megabytes over a long session and this runs at every turn's end, so
the file is read backwards in chunks and only as far as the last assistant message.

No-ops (nothing sent, nothing spooled):
- ``stop_hook_active`` is true: Claude Code is already continuing because of a Stop hook;
  summarising again would double-count the turn.
- the stop is a subagent's (``agent_id`` present, or a SubagentStop event): its answer goes to
  the parent agent, which summarises the turn itself.

Prints ``{}``. Fail-open: see ``hooks/_runtime.py``; exits 0 whatever happens.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime  # noqa: E402
from workbench import redact  # noqa: E402

HOOK = "Stop"
ROUTE = "/api/sessions/summarize"
CHUNK_BYTES = 64 * 1024


def iter_lines_reversed(path: str, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Yield the non-blank lines of a file, last first, reading it backwards in chunks.

    Pieces of a line that spans chunks are collected in a list and joined once, so a single
    huge line costs linear, not quadratic, time.
    """
    with open(path, "rb") as fh:
        pos = fh.seek(0, os.SEEK_END)
        tail: list[bytes] = []  # the current line's pieces, last piece first
        while pos > 0:
            step = min(chunk_bytes, pos)
            pos -= step
            fh.seek(pos)
            chunk = fh.read(step)
            if b"\n" not in chunk:
                tail.append(chunk)
                continue
            pieces = chunk.split(b"\n")
            tail.append(pieces[-1])
            line = b"".join(reversed(tail))
            if line.strip():
                yield line
            for middle in reversed(pieces[1:-1]):
                if middle.strip():
                    yield middle
            tail = [pieces[0]]
        line = b"".join(reversed(tail))
        if line.strip():
            yield line


def _assistant_entry(line: bytes) -> dict[str, Any] | None:
    """The parsed line when it is an assistant entry; None otherwise (or when unparsable)."""
    if b'"assistant"' not in line:  # cheap pre-filter: most lines are tool results
        return None
    try:
        entry = json.loads(line)
    except ValueError:  # a half-written last line, or garbage: skip it
        return None
    return entry if isinstance(entry, dict) and entry.get("type") == "assistant" else None


def _message(entry: dict[str, Any]) -> dict[str, Any]:
    message = entry.get("message")
    return message if isinstance(message, dict) else {}


def _texts(entry: dict[str, Any]) -> list[str]:
    content = _message(entry).get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def last_assistant_message(transcript_path: str, chunk_bytes: int = CHUNK_BYTES) -> str:
    """The text of the transcript's last assistant message; ``""`` if none or no transcript."""
    if not transcript_path:
        return ""
    found: list[dict[str, Any]] = []  # the last message's lines, last first
    message_id: object = None
    try:
        for line in iter_lines_reversed(os.path.expanduser(transcript_path), chunk_bytes):
            entry = _assistant_entry(line)
            if not found:
                if entry is not None:
                    found.append(entry)
                    message_id = _message(entry).get("id")
                continue
            # Trigger: the line before holds another block of the same API message.
            # Why: Claude Code writes one line per content block. / Outcome: join them.
            if message_id and entry is not None and _message(entry).get("id") == message_id:
                found.append(entry)
                continue
            break
    except (OSError, ValueError):  # missing, unreadable, not a file, or a NUL in the path:
        pass  # summarise without the answer (as pre_tool_use_read's stat does)
    texts = [text for entry in reversed(found) for text in _texts(entry)]
    return "\n".join(text for text in texts if text)


def build_body(event: _runtime.HookInput) -> dict[str, Any] | None:
    """The sessions/summarize body, or None for the no-op cases in the module docstring."""
    if event.stop_hook_active or event.agent_id or event.hook_event_name == "SubagentStop":
        return None
    message = event.last_assistant_message
    if message is None:  # Claude Code: the answer is in the transcript, not the payload
        message = last_assistant_message(event.transcript_path)
    return {
        "contentSessionId": event.session_id,
        # The transcript is read here, not from stdin: redact it, and replace lone surrogates
        # (an answer cut mid-emoji) so the body can be sent and spooled as UTF-8.
        "last_assistant_message": redact.redact_value(message, surrogates=True),
    }


def main() -> None:
    event = _runtime.read_input()
    body = build_body(event) if event is not None else None
    if event is not None and body is not None:
        _runtime.deliver(HOOK, ROUTE, body, cwd=event.cwd)
    _runtime.emit()


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        _runtime.emit_fallback()
    sys.exit(0)
