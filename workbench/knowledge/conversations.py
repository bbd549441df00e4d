"""Knowledge-agent conversations, one JSON file each under ``<data_dir>/conversations/``.

A conversation is identified by the ``session_id`` stored in its corpus file, so it survives
service restarts: the service keeps no conversation state in memory. It holds the turns
(question, answer, citations, usage); the Claude agent replays them as the message history
on every follow-up, and the offline agent reads the previous question from them.

A session id is checked against ``SESSION_ID`` before it becomes a path: it comes from a
corpus file, which a person may have edited, and must never point outside this folder. A
missing, corrupt or invalid conversation file reads as ``None``, which the agent treats as a
lost conversation and re-primes (once), never as a crash.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from workbench.clock import iso_from_ms, now_ms
from workbench.knowledge import atomic

VERSION = 1
SESSION_ID = re.compile(r"kc_[0-9a-f]{32}")


class Turn(BaseModel):
    """One question and its answer."""

    question: str
    answer: str
    citations: list[int] = Field(default_factory=list)
    usage: dict[str, int] = Field(default_factory=dict)
    agent: str = ""
    at: str = ""


class Conversation(BaseModel):
    """A persisted conversation with one corpus."""

    version: int = VERSION
    session_id: str
    corpus: str
    agent: str
    created_at: str
    updated_at: str
    prime_usage: dict[str, int] = Field(default_factory=dict)
    turns: list[Turn] = Field(default_factory=list)

    def messages(self) -> list[dict[str, Any]]:
        """The turns as Messages API history: user/assistant pairs, oldest first."""
        history: list[dict[str, Any]] = []
        for turn in self.turns:
            history.append({"role": "user", "content": turn.question})
            history.append({"role": "assistant", "content": turn.answer})
        return history


def new(corpus: str, agent: str) -> Conversation:
    """A fresh, empty conversation with a new session id (not saved yet)."""
    stamp = iso_from_ms(now_ms())
    return Conversation(
        session_id=f"kc_{uuid.uuid4().hex}",
        corpus=corpus,
        agent=agent,
        created_at=stamp,
        updated_at=stamp,
    )


def path_for(folder: Path, session_id: str) -> Path | None:
    """The file of ``session_id``, or None when the id is not one we issue."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        return None
    return folder / f"{session_id}.json"


def load(folder: Path, session_id: str | None) -> Conversation | None:
    """The conversation, or None when it is missing, corrupt or not ours."""
    path = path_for(folder, session_id) if session_id else None
    if path is None:
        return None
    try:
        conversation = Conversation.model_validate(atomic.read_json(path))
    except (OSError, ValueError, ValidationError):
        return None
    return conversation if conversation.session_id == session_id else None


def save(folder: Path, conversation: Conversation) -> None:
    """Write the conversation atomically (stamping ``updated_at``)."""
    path = path_for(folder, conversation.session_id)
    if path is None:
        raise ValueError(f"not a conversation id: {conversation.session_id!r}")
    conversation.updated_at = iso_from_ms(now_ms())
    atomic.write_json(path, conversation.model_dump())


def discard(folder: Path, session_id: str | None) -> None:
    """Delete a conversation file if there is one (reprime, rebuild, corpus deletion)."""
    path = path_for(folder, session_id) if session_id else None
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
