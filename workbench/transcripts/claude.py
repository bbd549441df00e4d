"""Claude Code's transcript lines (``~/.claude/projects/<folder>/<session>.jsonl``) to events.

The format, as Claude Code 2.1.332 (npm, the suite's pin) writes it and as
``tests/test_transcripts_real.py`` checks against a real run: one JSON object per line, each
with a ``type``. The lines that carry memory:

- ``user`` with ``message.content`` a string (or text blocks): a prompt. Also ``sessionId``,
  ``cwd``, ``uuid``, ``timestamp``. Not a prompt: ``isMeta`` lines (Claude Code's own
  notes), ``isCompactSummary`` (the summary of a compacted conversation), text that is only
  Claude Code's markup (``<command-name>``, ``<local-command-stdout>``, ``<system-reminder>``)
  and lines of a sub-agent (``isSidechain``).
- ``assistant`` with ``message.content`` blocks: ``tool_use`` (``id``, ``name``, ``input``)
  opens a tool call; ``text`` is what the model said. ``message.stop_reason == "end_turn"``
  ends the turn: a ``stop`` with that text (what the Stop hook reads from this same file).
- ``user`` with ``tool_result`` blocks (``tool_use_id``, ``content``): a tool call's result;
  ``toolUseResult`` beside it is the structured result PostToolUse's ``tool_response`` holds.

Every other type (``attachment``, ``queue-operation``, ``api-request*``, ``last-prompt``,
``tools-used``, ``cost-state``, ``summary``, ``system``, ``file-history-snapshot``…) carries
no memory: counted as ignored. A type this module has never seen is counted as unknown.

A turn whose end was never written (an older Claude Code left ``stop_reason`` null, or the
agent was killed) is ended by the next prompt, or by ``flush`` once the file is quiet.
"""

from __future__ import annotations

from typing import Any

from workbench.transcripts import pending_calls
from workbench.transcripts.records import TranscriptEvent, epoch_ms, text

PLATFORM_SOURCE = "claude-code"
IGNORED = frozenset(
    {
        "attachment",
        "queue-operation",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "last-prompt",
        "atis-latch",
        "tools-used",
        "cost-state",
        "summary",
        "system",
        "file-history-snapshot",
        "progress",
        "custom-title",
        "tag",
        "agent-name",
        "pr-link",
        "mode",
        "permission-mode",
        "worktree-state",
        "content-replacement",
        "attribution-snapshot",
    }
)
MARKUP = ("<command-name>", "<command-message>", "<local-command-", "<system-reminder>")


class ClaudeParser:
    """Stateful over one file: tool calls wait for their results across reads.

    ``state()`` is JSON, persisted with the file's offset, so a watcher that read a
    ``tool_use`` in one round pairs it with its ``tool_result`` in the next.
    """

    platform_source = PLATFORM_SOURCE

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.pending = pending_calls.restore(state)
        self.session = text(state.get("session"))
        self.cwd = text(state.get("cwd"))
        self.said = text(state.get("said"))  # the open turn's last assistant text
        self.said_uuid = text(state.get("said_uuid"))
        self.said_ms = state.get("said_ms") if isinstance(state.get("said_ms"), int) else None
        self.ignored = 0
        self.unknown = 0

    def state(self) -> dict[str, Any]:
        return {
            "platform": "claude",
            "pending": self.pending,
            "session": self.session,
            "cwd": self.cwd,
            "said": self.said,
            "said_uuid": self.said_uuid,
            "said_ms": self.said_ms,
        }

    def feed(self, record: dict[str, Any], offset: int) -> list[TranscriptEvent]:
        """The events of one line (``offset``: where it starts in the file)."""
        kind = record.get("type")
        if kind not in ("user", "assistant"):
            if kind in IGNORED:
                self.ignored += 1
            else:
                self.unknown += 1
            return []
        message = record.get("message")
        if not isinstance(message, dict):
            self.unknown += 1
            return []
        self.session = text(record.get("sessionId")) or self.session
        self.cwd = text(record.get("cwd")) or self.cwd
        if not self.session:
            self.unknown += 1
            return []
        at = epoch_ms(record.get("timestamp"))
        uuid = text(record.get("uuid")) or f"{self.session}:{offset}"
        if kind == "assistant":
            return self._assistant(record, message, uuid, at)
        return self._user(record, message, uuid, at)

    def flush(self) -> list[TranscriptEvent]:
        """End the open turn (the file is quiet: no ``end_turn`` will come)."""
        return self._end_turn()

    # ----- lines ----------------------------------------------------------------------------
    def _assistant(
        self, record: dict[str, Any], message: dict[str, Any], uuid: str, at: int | None
    ) -> list[TranscriptEvent]:
        blocks = _blocks(message.get("content"))
        for block in blocks:
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                self.pending[block["id"]] = [text(block.get("name")), block.get("input")]
        pending_calls.bound(self.pending)
        if record.get("isSidechain") is True:
            return []
        said = "\n".join(text(b.get("text")) for b in blocks if b.get("type") == "text").strip()
        if said:
            self.said, self.said_uuid, self.said_ms = said, uuid, at
        if message.get("stop_reason") == "end_turn":
            return self._end_turn()
        return []

    def _user(
        self, record: dict[str, Any], message: dict[str, Any], uuid: str, at: int | None
    ) -> list[TranscriptEvent]:
        content = message.get("content")
        blocks = _blocks(content)
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            structured = record.get("toolUseResult") if len(results) == 1 else None
            agent = text(record.get("agentId")) or None
            return [e for b in results if (e := self._result(b, structured, agent, at))]
        if record.get("isSidechain") is True or record.get("isMeta") is True:
            self.ignored += 1
            return []
        if record.get("isCompactSummary") is True:
            self.ignored += 1
            return []
        prompt = "\n".join(
            t for b in blocks if b.get("type") == "text" and (t := text(b.get("text")))
        )
        if not prompt.strip() or prompt.lstrip().startswith(MARKUP):
            self.ignored += 1
            return []
        found = self._end_turn()  # a turn the file never ended
        found.append(
            TranscriptEvent(
                "prompt", self.session, self.cwd, f"transcript:claude:{uuid}", at, text=prompt
            )
        )
        return found

    def _result(
        self, block: dict[str, Any], structured: Any, agent: str | None, at: int | None
    ) -> TranscriptEvent | None:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or call_id not in self.pending:
            self.unknown += 1  # a result whose call this file never showed
            return None
        name, arguments = self.pending.pop(call_id)
        response = structured if structured is not None else block.get("content")
        return TranscriptEvent(
            "tool",
            self.session,
            self.cwd,
            f"transcript:claude:{call_id}",
            at,
            tool_name=name,
            tool_input=arguments,
            tool_response=response,
            tool_use_id=call_id,
            agent_id=agent,
        )

    def _end_turn(self) -> list[TranscriptEvent]:
        if not self.said_uuid:
            return []
        event = TranscriptEvent(
            "stop",
            self.session,
            self.cwd,
            f"transcript:claude:{self.said_uuid}:stop",
            self.said_ms,
            text=self.said,
        )
        self.said, self.said_uuid, self.said_ms = "", "", None
        return [event]


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as blocks: a plain string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []
