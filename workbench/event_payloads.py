"""One typed payload per event kind: what ``ingest`` writes to the events log, ``derive`` reads.

Why: the payload was an untyped dict built in ``ingest.py`` and read back with ``.get`` in
``derive.py``, so a renamed key on one side was a silent ``None`` on the other. Each kind now
has one frozen class, and both sides go through it.

The wire (and the ``events.payload`` JSON column) is unchanged, key for key: ``to_wire`` gives
exactly the dict stored before these classes existed (``session_init`` keeps its camelCase
``platformSource``; ``memory_save`` carries ``platform_source`` only when it is not Claude
Code's). ``from_wire`` reads any stored payload, old ones included, with the defaults
``derive`` always used for a missing key, so the log written by an older version replays.

Standard library only: it sits at the bottom of the layers, beside ``models``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


def _str(payload: dict[str, Any], key: str, default: str = "") -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else default


def _opt(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class SessionInit:
    """``session_init``: a user prompt (cleaned of private blocks) opening or continuing a turn."""

    KIND: ClassVar[str] = "session_init"
    project: str
    prompt: str
    platform_source: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "prompt": self.prompt,
            "platformSource": self.platform_source,
        }

    @classmethod
    def from_wire(cls, payload: dict[str, Any]) -> SessionInit:
        return cls(
            _str(payload, "project"), _str(payload, "prompt"), _str(payload, "platformSource")
        )


@dataclass(frozen=True)
class ToolCall:
    """``observation``: one tool call, its input and response redacted, queued for compression."""

    KIND: ClassVar[str] = "observation"
    tool_name: str
    tool_input: Any
    tool_response: Any
    cwd: str = ""
    tool_use_id: str | None = None
    agent_id: str | None = None
    agent_type: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "tool_response": self.tool_response,
            "cwd": self.cwd,
            "tool_use_id": self.tool_use_id,
            "agent_id": self.agent_id,
            "agent_type": self.agent_type,
        }

    @classmethod
    def from_wire(cls, payload: dict[str, Any]) -> ToolCall:
        return cls(
            tool_name=_str(payload, "tool_name"),
            tool_input=payload.get("tool_input"),
            tool_response=payload.get("tool_response"),
            cwd=_str(payload, "cwd"),
            tool_use_id=_opt(payload, "tool_use_id"),
            agent_id=_opt(payload, "agent_id"),
            agent_type=_opt(payload, "agent_type"),
        )


@dataclass(frozen=True)
class Summarize:
    """``summarize``: the end of a prompt's turn (Stop), queued for its summary."""

    KIND: ClassVar[str] = "summarize"
    last_assistant_message: str

    def to_wire(self) -> dict[str, Any]:
        return {"last_assistant_message": self.last_assistant_message}

    @classmethod
    def from_wire(cls, payload: dict[str, Any]) -> Summarize:
        return cls(_str(payload, "last_assistant_message"))


@dataclass(frozen=True)
class SessionEnd:
    """``session_end``: the session completed (SessionEnd's ``reason``)."""

    KIND: ClassVar[str] = "session_end"
    reason: str

    def to_wire(self) -> dict[str, Any]:
        return {"reason": self.reason}

    @classmethod
    def from_wire(cls, payload: dict[str, Any]) -> SessionEnd:
        return cls(_str(payload, "reason"))


@dataclass(frozen=True)
class MemorySave:
    """``memory_save``: a memory saved by hand; ``platform_source`` None means Claude Code's."""

    KIND: ClassVar[str] = "memory_save"
    text: str
    title: str
    project: str
    platform_source: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire = {"text": self.text, "title": self.title, "project": self.project}
        if self.platform_source is not None:
            wire["platform_source"] = self.platform_source
        return wire

    @classmethod
    def from_wire(cls, payload: dict[str, Any]) -> MemorySave:
        return cls(
            _str(payload, "text"),
            _str(payload, "title"),
            _str(payload, "project"),
            _opt(payload, "platform_source"),
        )


Payload = SessionInit | ToolCall | Summarize | SessionEnd | MemorySave
KINDS: dict[str, type[Payload]] = {
    c.KIND: c for c in (SessionInit, ToolCall, Summarize, SessionEnd, MemorySave)
}


def parse(kind: str, payload: dict[str, Any]) -> Payload | None:
    """The typed payload of a stored event of ``kind``; None for a kind this code does not know."""
    cls = KINDS.get(kind)
    return None if cls is None else cls.from_wire(payload)
