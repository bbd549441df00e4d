"""Pydantic domain types shared by the store, the compressors, the service and the CLI.

These are the *domain* shapes (what an observation is); the HTTP request bodies live in
``service/schemas.py`` because they are the wire contract, which changes for other reasons.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

OBSERVATION_TYPES = (
    "decision",
    "bugfix",
    "feature",
    "refactor",
    "discovery",
    "change",
    "security_alert",
    "security_note",
)
EventKind = Literal[
    "session_init", "observation", "summarize", "session_end", "memory_save", "scrub"
]
QueueStatus = Literal["pending", "claimed", "done", "failed"]


class ToolEvent(BaseModel):
    """One tool call as the compressor sees it (already redacted)."""

    model_config = ConfigDict(frozen=True)

    content_session_id: str
    project: str
    tool_name: str
    tool_input: Any = None
    tool_response: Any = None
    cwd: str = ""
    prompt_number: int = 0
    user_prompt: str = ""
    agent_id: str | None = None
    agent_type: str | None = None


class ObservationDraft(BaseModel):
    """What a compressor produces for one tool call; the store adds ids, hashes and times."""

    type: str = "discovery"
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = Field(default_factory=list)
    concepts: list[str] = Field(default_factory=list)
    files_read: list[str] = Field(default_factory=list)
    files_modified: list[str] = Field(default_factory=list)


class SummaryRequest(BaseModel):
    """Everything a compressor needs to digest one prompt of a session."""

    model_config = ConfigDict(frozen=True)

    content_session_id: str
    project: str
    prompt_number: int
    user_prompt: str = ""
    last_assistant_message: str = ""
    observations: list[Observation] = Field(default_factory=list)


class SummaryDraft(BaseModel):
    """A per-prompt digest as a compressor produces it."""

    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    notes: str = ""
    files_read: list[str] = Field(default_factory=list)
    files_edited: list[str] = Field(default_factory=list)


class CompressionResult(BaseModel):
    """Drafts plus what producing them cost (``discovery_tokens``) and who produced them."""

    observations: list[ObservationDraft] = Field(default_factory=list)
    summary: SummaryDraft | None = None
    discovery_tokens: int = 0
    generated_by: str = "offline"


class Observation(ObservationDraft):
    """A stored observation."""

    id: int
    content_session_id: str | None = None
    project: str
    prompt_number: int = 0
    discovery_tokens: int = 0
    created_at: str
    created_at_epoch: int
    content_hash: str
    generated_by: str = "offline"
    agent_id: str | None = None
    agent_type: str | None = None
    event_id: int | None = None
    platform_source: str = "claude-code"  # its session's (m010); the viewer shows it
    project_key: str | None = None  # which folder ``project`` is (m012; locate.project_identity)


class Summary(SummaryDraft):
    """A stored session summary (one per prompt that reached Stop)."""

    id: int
    content_session_id: str
    project: str
    prompt_number: int = 0
    discovery_tokens: int = 0
    created_at: str
    created_at_epoch: int
    generated_by: str = "offline"
    project_key: str | None = None  # its session's (m012)


class Prompt(BaseModel):
    """A stored user prompt (cleaned, at most 4000 characters)."""

    id: int
    content_session_id: str
    project: str
    prompt_number: int
    prompt_text: str
    created_at: str
    created_at_epoch: int
    project_key: str | None = None  # its session's (m012)


class Session(BaseModel):
    """A Claude Code session as the store keeps it."""

    id: int
    content_session_id: str
    project: str
    platform_source: str
    status: Literal["active", "completed", "failed"]
    started_at: str
    started_at_epoch: int
    completed_at: str | None = None
    completed_at_epoch: int | None = None
    prompt_counter: int = 0
    project_key: str | None = None  # which folder ``project`` is (m012)


SummaryRequest.model_rebuild()


class StaleObservation(BaseModel):
    """One observation a later change made stale, and what changed under it
    (``workbench.staleness.report`` builds it; ``POST /api/stale`` answers it in camelCase)."""

    id: int
    project: str
    type: str
    title: str
    created_at: str
    created_at_epoch: int
    changed_files: list[str]
    repo_root: str | None
    git_commit: str | None
    commits: list[str]
