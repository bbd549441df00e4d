"""The knowledge agent: ``POST /api/corpus/{name}/prime|reprime|query`` (snake_case wire)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Primed(BaseModel):
    """``prime`` / ``reprime``: the corpus's conversation and what priming cost."""

    name: str
    session_id: str
    agent: str
    already_primed: bool
    turns: int
    usage: dict[str, Any]


class Source(BaseModel):
    """An observation the answer cites, as the corpus holds it."""

    id: int
    type: str
    title: str
    created_at: str


class Answer(BaseModel):
    """``query``: the answer, the observation ids it cites, and what the call cost."""

    answer: str
    session_id: str
    citations: list[int]
    usage: dict[str, Any]
    agent: str
    name: str
    turn: int
    auto_primed: bool
    reprimed: bool
    reprime_reason: str | None
    sources: list[Source]
