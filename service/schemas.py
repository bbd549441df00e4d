"""Request bodies: the wire contract of the hook routes and the memory API.

Field names are camelCase where claude-mem's API (and so outside clients) use camelCase, and
snake_case where Claude Code's hook payload does (``tool_name``…): they are kept exactly as
the contract names them. ``extra="forbid"`` turns a typo into a precise 422 instead of a
silently dropped field. Each hook body knows how to hand itself to the ``Ingestor``, so the
routes and spool replay share one path.

Non-finite numbers (NaN, Infinity, an overflowing ``1e400``) and JSON nested deeper than
``service.boundary.MAX_DEPTH`` are refused here with a 422 that names the field, the rules
``service.boundary`` states: ``allow_inf_nan=False`` for typed floats, and ``check_json`` over
the free-form ``tool_input``/``tool_response``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

from service.boundary import check_json
from service.params import RowId
from workbench.bounds import SQLITE_INT_MAX
from workbench.ingest import Ingestor, IngestResult
from workbench.locate import MAX_PROJECT_KEY_CHARS
from workbench.platforms import DEFAULT_PLATFORM_SOURCE, PLATFORM_SOURCES
from workbench.redact import redact_value


def _redacted(value: Any) -> Any:
    """A string without its private blocks, *before* any bound is checked or applied.

    Redact, then bound: cut first, ``<private>SECRET…</private>`` across the bound became an
    unclosed ``<private>SECRET…`` that no later redaction finds (issue 19); checked first, a
    field that fits once its private block is gone was refused. The hook routes skip the
    boundary's tag scan (``service.boundary``), so their bounded fields redact here.
    """
    return redact_value(value) if isinstance(value, str) else value


Redacted = BeforeValidator(_redacted)
SessionId = Annotated[str, Field(min_length=1, max_length=200), Redacted]
Name = Annotated[str, Field(min_length=1, max_length=200), Redacted]
# Empty (e.g. once redacted) is no key: the session is keyed by its name (m012).
ProjectKey = Annotated[str, Field(max_length=MAX_PROJECT_KEY_CHARS), Redacted]
ShortText = Annotated[str, Field(max_length=500)]
SHORT_TEXT_CHARS = 500


def _fit_id(value: Any) -> Any:
    """An id longer than ``SHORT_TEXT_CHARS`` becomes ``sha256:<hex>`` of itself.

    An event from a real session must never be refused for the length of an optional id
    (``tool_use_id``, ``agent_id``). A hash rather than a cut: the same id still maps to the
    same key (a re-sent call stays a duplicate), and two ids sharing a long prefix stay apart.
    Redacted first, so no private text is hashed either.
    """
    value = _redacted(value)
    if isinstance(value, str) and len(value) > SHORT_TEXT_CHARS:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
        return f"sha256:{digest}"
    return value


def _fit_text(value: Any) -> Any:
    """Free text of an optional field (a SessionEnd ``reason``…) is redacted, then cut (not
    refused)."""
    value = _redacted(value)
    if isinstance(value, str) and len(value) > SHORT_TEXT_CHARS:
        return value[:SHORT_TEXT_CHARS]
    return value


# Optional fields a hook passes on from Claude Code: fitted at the boundary, never a 422.
FittedId = Annotated[ShortText, BeforeValidator(_fit_id)]
FittedText = Annotated[ShortText, BeforeValidator(_fit_text)]


def _known_platform(value: Any) -> Any:
    """Only a platform with an adapter: a typo must not start a platform of its own."""
    if not isinstance(value, str) or value not in PLATFORM_SOURCES:
        known = ", ".join(repr(name) for name in PLATFORM_SOURCES)
        shown = value[:40] if isinstance(value, str) else value
        raise ValueError(
            f"unknown platformSource {shown!r:.60}: send one of {known} (the hook's or the"
            " MCP server's --platform sets it), or leave it out for 'claude-code'"
        )
    return value


# Which agent sent it: a hook (its adapter) or the MCP server (``workbench mcp --platform``).
PlatformSource = Annotated[str, BeforeValidator(_known_platform)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)


class SessionInit(_Body):
    contentSessionId: SessionId
    project: Name
    # Which folder ``project`` is (``workbench.locate.project_identity``); absent from older
    # hooks and spooled bodies, whose sessions are keyed by their name.
    projectKey: ProjectKey | None = None
    # None (or absent): there was no prompt text; "": the hook's mark of an all-private one.
    prompt: str | None = None
    platformSource: PlatformSource = DEFAULT_PLATFORM_SOURCE

    def ingest(self, ingestor: Ingestor, event_key: str | None) -> IngestResult:
        return ingestor.session_init(
            content_session_id=self.contentSessionId,
            project=self.project,
            prompt=self.prompt,
            platform_source=self.platformSource,
            event_key=event_key,
            project_key=self.projectKey,
        )


class ToolObservation(_Body):
    contentSessionId: SessionId
    tool_name: Name
    tool_input: Any = None
    tool_response: Any = None
    cwd: Annotated[str, Field(max_length=4096), Redacted] = ""
    tool_use_id: FittedId | None = None
    agentId: FittedId | None = None
    agentType: FittedText | None = None

    @field_validator("tool_input", "tool_response")
    @classmethod
    def _storable(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse NaN/Infinity and absurd nesting inside: the log stores only valid JSON."""
        check_json(value, str(info.field_name))
        return value

    def ingest(self, ingestor: Ingestor, event_key: str | None) -> IngestResult:
        return ingestor.observation(
            content_session_id=self.contentSessionId,
            tool_name=self.tool_name,
            tool_input=self.tool_input,
            tool_response=self.tool_response,
            cwd=self.cwd,
            tool_use_id=self.tool_use_id,
            agent_id=self.agentId,
            agent_type=self.agentType,
            event_key=event_key,
        )


class Summarize(_Body):
    contentSessionId: SessionId
    last_assistant_message: str = ""

    def ingest(self, ingestor: Ingestor, event_key: str | None) -> IngestResult:
        return ingestor.summarize(
            content_session_id=self.contentSessionId,
            last_assistant_message=self.last_assistant_message,
            event_key=event_key,
        )


class SessionEnd(_Body):
    contentSessionId: SessionId
    reason: FittedText = ""

    def ingest(self, ingestor: Ingestor, event_key: str | None) -> IngestResult:
        return ingestor.session_end(
            content_session_id=self.contentSessionId, reason=self.reason, event_key=event_key
        )


class MemorySave(_Body):
    text: Annotated[str, Field(max_length=100_000), Redacted]
    title: Annotated[str, Field(max_length=300), Redacted] | None = None
    project: Name | None = None
    projectKey: ProjectKey | None = None  # the saving client's folder (locate.project_identity)
    platformSource: PlatformSource = DEFAULT_PLATFORM_SOURCE  # the agent whose MCP server saved it

    @field_validator("text")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        """Empty, or only private: the boundary has already removed ``<private>`` blocks."""
        if not value.strip():
            raise ValueError(
                "nothing to save: the text is empty (private blocks are removed before "
                "anything is stored); send the memory text outside <private> tags"
            )
        return value

    def ingest(self, ingestor: Ingestor, event_key: str | None) -> IngestResult:
        return ingestor.memory_save(
            text=self.text,
            title=self.title,
            project=self.project,
            event_key=event_key,
            project_key=self.projectKey,
            platform_source=self.platformSource,
        )


HOOK_BODIES: dict[str, type[SessionInit | ToolObservation | Summarize | SessionEnd]] = {
    "/api/sessions/init": SessionInit,
    "/api/sessions/observations": ToolObservation,
    "/api/sessions/summarize": Summarize,
    "/api/sessions/end": SessionEnd,
}


def coerce_ids(value: Any) -> list[int]:
    """Accept ``[1, 2]``, ``"[1, 2]"`` or ``"1,2"``; reject anything else with the forms."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                raise ValueError(f"ids {value!r} is not a valid JSON array") from None
        else:
            value = [part.strip() for part in text.split(",") if part.strip()]
    if not isinstance(value, list):
        raise ValueError("ids must be an array of integers, a JSON array string or '1,2,3'")
    out: list[int] = []
    for item in value:
        if isinstance(item, bool):
            raise ValueError(f"ids must be integers, got {item!r}")
        try:
            number = int(item)
        except (TypeError, ValueError, OverflowError):  # OverflowError: 1e400 is inf
            raise ValueError(f"ids must be integers, got {item!r}") from None
        if number < 1:
            raise ValueError(f"ids must be positive, got {number}")
        if number > SQLITE_INT_MAX:
            raise ValueError(f"ids must be at most {SQLITE_INT_MAX}, got {number}")
        out.append(number)
    return out


class ObservationBatch(_Body):
    """Full observations by id. ``source``/``contentSessionId`` are optional and only feed the
    injection ledger: when either is given, each returned id is recorded in ``fetches``
    (e.g. the MCP ``get_observations`` tool sends ``"source": "mcp"``)."""

    ids: list[int]
    orderBy: Literal["date_desc", "date_asc", "id_asc", "id_desc"] = "date_desc"
    limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    project: Annotated[str, Field(max_length=200), Redacted] | None = None
    source: Annotated[str, Field(min_length=1, max_length=50), Redacted] | None = None
    contentSessionId: SessionId | None = None

    @field_validator("ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> list[int]:
        ids = coerce_ids(value)
        if len(ids) > 1000:
            raise ValueError("at most 1000 ids per batch")
        return ids


class Recompress(_Body):
    project: str | None = None
    since: str | None = None
    compressor: Literal["offline", "claude", "openai_compat"] | None = None


class RetryFailed(_Body):
    eventIds: list[RowId] | None = None
