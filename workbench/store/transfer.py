"""Export and import in one JSON format: sessions, prompts, observations, summaries.

Format (``format: "workbench-export"``, ``version: 1``)::

    {"format": "workbench-export", "version": 1, "exported_at": "...",
     "sessions": [...], "prompts": [...], "observations": [...], "summaries": [...]}

Each row carries its natural key, so import dedups without trusting ids from another store:
sessions by ``content_session_id``, prompts and summaries by (session, prompt number),
observations by content hash. Existing rows are kept (never overwritten); the report counts
imported and skipped rows per kind. Imported text is redacted again, like any other input:
every string field and list item of every row (``concepts``, ``files_read``…, not only the
prose), right after validation.
Import runs in one transaction: a bad file changes nothing.

``platform_source`` (on sessions, and on observations, whose own value only fills a session
the file does not list) must be a platform of ``workbench.platforms``. claude-mem's values are
mapped to ours: its exports (``scripts/export-memories.ts``: the ``sdk_sessions`` rows) carry
what its ``normalizePlatformSource`` made of the hook's platform (``src/shared/platform-source.ts``,
thedotmack/claude-mem @ e2d1df569a8f04075d40e92461128ece7cf04c82): lowercased, blanks to ``-``,
``transcript`` or anything with ``codex`` → ``codex``, with ``cursor`` → ``cursor``, with
``claude`` → ``claude``, empty → ``claude``, any other name as is (``gemini``, ``windsurf``).
Such a name is an *adapter* name here (``claude`` → ``claude-code``, ``gemini`` →
``gemini-cli``), so the mapping follows ``PLATFORM_SOURCES`` as platforms are added. Anything
else is refused (422) naming the row, the field, the value and the known platforms: a typo
must not become a platform of its own.

Numbers are checked before anything is written, so an out-of-range value is a 422 that names
its field (``observations.0.created_at_epoch``), never a 500 from SQLite or ``datetime``:
epochs (and ISO timestamps) must lie between 1970-01-01 and 9999-12-31 (``Epoch``), counts
between 0 and SQLite's largest INTEGER (``Count``).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workbench.clock import iso_from_ms, ms_from_iso, now_ms
from workbench.errors import InvalidInput
from workbench.locate import MAX_PROJECT_KEY_CHARS
from workbench.models import ObservationDraft, SummaryDraft
from workbench.platforms import DEFAULT_PLATFORM_SOURCE, PLATFORM_SOURCES
from workbench.redact import may_hold_tag, redact_value, strip_private
from workbench.store import deletions
from workbench.store import observations as obs_store
from workbench.store import sessions as session_store
from workbench.store import summaries as summary_store
from workbench.store.connection import atomic

FORMAT = "workbench-export"
VERSION = 1
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, the last instant datetime has
MAX_INTEGER = 2**63 - 1  # SQLite's INTEGER is a signed 64-bit number
Epoch = Annotated[int, Field(ge=0, le=MAX_EPOCH_MS)]
Count = Annotated[int, Field(ge=0, le=MAX_INTEGER)]


class ImportRefused(InvalidInput):
    """A field of the import file breaks a rule; the message names the row and the field."""

    status_code = 422


def import_platform(value: object) -> str:
    """An imported ``platform_source`` as ours (claude-mem's names mapped); ``ValueError``
    naming the value and the known platforms for anything else."""
    if value is None:
        return DEFAULT_PLATFORM_SOURCE
    if not isinstance(value, str):
        raise ValueError(f"platform_source must be text, got {str(value)[:40]!r}")
    value = strip_private(value)  # as the service's boundary does, so the library agrees
    if value in PLATFORM_SOURCES:
        return value
    # claude-mem's normalizePlatformSource (see the module docstring), then its name as ours.
    source = re.sub(r"\s+", "-", value.strip().lower())
    if not source:
        return DEFAULT_PLATFORM_SOURCE
    if source in PLATFORM_SOURCES:
        return source
    if source == "transcript" or "codex" in source:
        source = "codex"
    elif "cursor" in source:
        source = "cursor"
    elif "claude" in source:
        source = "claude"
    by_adapter = {adapter: name for name, adapter in PLATFORM_SOURCES.items()}
    if source in by_adapter:
        return by_adapter[source]
    raise ValueError(
        f"platform_source {value[:40]!r} is not a known platform; known: "
        f"{', '.join(PLATFORM_SOURCES)} (claude-mem's {', '.join(by_adapter)} are mapped to "
        "them). Fix the value in the file, or drop it for claude-code"
    )


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")

    @field_validator("created_at", "started_at", "completed_at", check_fields=False)
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        """Refuse a bad timestamp here, where the error names its row, not mid-import."""
        if value is not None:
            ms = ms_from_iso(value)  # the ValueError names the text and the accepted forms
            if not 0 <= ms <= MAX_EPOCH_MS:
                raise ValueError(f"{value!r} is outside 1970-01-01 … 9999-12-31")
        return value


class SessionRow(_Row):
    content_session_id: str = Field(min_length=1)
    project: str = "unknown"
    platform_source: str = DEFAULT_PLATFORM_SOURCE
    status: str = "completed"
    started_at: str | None = None
    started_at_epoch: Epoch | None = None
    completed_at: str | None = None
    completed_at_epoch: Epoch | None = None
    prompt_counter: Count = 0
    # Which folder the project is (m012). Kept on import, so a restored backup is shown to
    # the same folder's sessions; absent (older files), the session is keyed by its name.
    project_key: str | None = Field(default=None, min_length=1, max_length=MAX_PROJECT_KEY_CHARS)

    @field_validator("platform_source", mode="before")
    @classmethod
    def _platform(cls, value: Any) -> str:
        return import_platform(value)


class PromptRow(_Row):
    content_session_id: str = Field(min_length=1)
    project: str = "unknown"
    prompt_number: Count
    prompt_text: str
    created_at: str | None = None
    created_at_epoch: Epoch | None = None


class ObservationRow(_Row):
    content_session_id: str | None = None
    project: str = "unknown"
    prompt_number: Count = 0
    type: str = "discovery"
    title: str = Field(min_length=1)
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = Field(default_factory=list)
    concepts: list[str] = Field(default_factory=list)
    files_read: list[str] = Field(default_factory=list)
    files_modified: list[str] = Field(default_factory=list)
    discovery_tokens: Count = 0
    created_at: str | None = None
    created_at_epoch: Epoch | None = None
    generated_by: str = "import"
    agent_id: str | None = None
    agent_type: str | None = None
    # Only for a session the file does not list: a listed session's platform wins.
    platform_source: str | None = None

    @field_validator("platform_source", mode="before")
    @classmethod
    def _platform(cls, value: Any) -> str | None:
        return None if value is None else import_platform(value)


class SummaryRow(_Row):
    content_session_id: str = Field(min_length=1)
    project: str = "unknown"
    prompt_number: Count = 0
    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    notes: str = ""
    files_read: list[str] = Field(default_factory=list)
    files_edited: list[str] = Field(default_factory=list)
    discovery_tokens: Count = 0
    created_at: str | None = None
    created_at_epoch: Epoch | None = None
    generated_by: str = "import"


class ExportDocument(BaseModel):
    """The whole file, validated before anything is written."""

    model_config = ConfigDict(extra="ignore")

    format: str = FORMAT
    version: int = VERSION
    sessions: list[SessionRow] = Field(default_factory=list)
    prompts: list[PromptRow] = Field(default_factory=list)
    observations: list[ObservationRow] = Field(default_factory=list)
    summaries: list[SummaryRow] = Field(default_factory=list)


def _epoch(epoch: int | None, iso: str | None) -> int:
    if epoch is not None:
        return epoch
    if iso:
        return ms_from_iso(iso)
    return now_ms()


def export(conn: sqlite3.Connection, project: str | None = None) -> dict[str, Any]:
    """Everything (or one project) as an export document (plain dict, JSON-ready)."""
    where, params = ("WHERE project = ?", [project]) if project else ("", [])

    def rows(table: str, drop: tuple[str, ...] = ("id", "session_id", "event_id")) -> list[Any]:
        out = []
        for row in conn.execute(f"SELECT * FROM {table} {where} ORDER BY id", params):
            data = {k: row[k] for k in row.keys() if k not in drop}
            # A session's folder key (m012) goes with it when it says more than its name;
            # its rows take it again on import (the m012 triggers), so they carry none.
            if table != "sessions" or data.get("project_key") == data.get("project"):
                data.pop("project_key", None)
            for key in ("facts", "concepts", "files_read", "files_modified", "files_edited"):
                if key in data and isinstance(data[key], str):
                    data[key] = json.loads(data[key])
            out.append(data)
        return out

    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": iso_from_ms(now_ms()),
        "sessions": rows("sessions"),
        "prompts": rows("user_prompts"),
        "observations": rows("observations", ("id", "session_id", "event_id", "content_hash")),
        "summaries": rows(
            "session_summaries", ("id", "session_id", "event_id", "updated_at_epoch")
        ),
    }


def parse(document: Any) -> ExportDocument:
    """Validate an export document; ``InvalidInput`` says which row and field is wrong."""
    if not isinstance(document, dict):
        raise InvalidInput("import expects a JSON object in the workbench-export format")
    if document.get("format", FORMAT) != FORMAT:
        raise InvalidInput(
            f"unknown import format {document.get('format')!r}; expected {FORMAT!r} "
            "(the output of workbench export / GET /api/export)"
        )
    if document.get("version", VERSION) != VERSION:
        raise InvalidInput(f"unsupported export version {document.get('version')!r}")
    try:
        doc = ExportDocument.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ImportRefused(
            f"invalid import file at {where}: {first['msg']} ({exc.error_count()} errors)"
        ) from None
    return doc.model_copy(
        update={
            kind: [_redacted(row) for row in getattr(doc, kind)]
            for kind in ("sessions", "prompts", "observations", "summaries")
        }
    )


def _redacted(row: _Row) -> Any:
    """``row`` with private blocks removed from every string field and list item.

    After validation on purpose: a title that was only private still becomes "untitled"
    below, while an empty title in the file is refused by name.
    """
    update = {}
    # ``vars()``, not pydantic's field iterator: this runs for every row of a 100k-row import.
    for name, value in vars(row).items():
        if (isinstance(value, str) and may_hold_tag(value)) or (isinstance(value, list) and value):
            cleaned = redact_value(value)
            if cleaned != value:  # most rows hold no private block: no copy for them
                update[name] = cleaned
    return row.model_copy(update=update) if update else row


@contextmanager
def _refused_as_invalid() -> Iterator[None]:
    """A row SQLite refuses (an integer too large…) is the file's fault: a 400, not a 500.

    Entered outside ``atomic()``, so the transaction has rolled back when this converts.
    """
    try:
        yield
    except (OverflowError, ValueError, sqlite3.IntegrityError) as exc:
        raise InvalidInput(f"import refused, nothing was imported: {exc}") from None


def _forgotten(conn: sqlite3.Connection, row: ObservationRow, created_ms: int) -> bool:
    """A row a person deleted here: same text (hash) or same origin (session + instant)."""
    title = strip_private(row.title) or "untitled"
    digest = obs_store.content_hash(row.content_session_id, title, strip_private(row.narrative))
    return bool(deletions.tombstoned(conn, [digest])) or deletions.forgotten_origin(
        conn, row.content_session_id, created_ms
    )


def import_document(conn: sqlite3.Connection, doc: ExportDocument) -> dict[str, dict[str, int]]:
    """Insert what is new, keep what exists; return ``{kind: {imported, skipped}}``."""
    report = {
        k: {"imported": 0, "skipped": 0}
        for k in ("sessions", "prompts", "observations", "summaries")
    }

    def count(kind: str, changed: int) -> None:
        report[kind]["imported"] += changed
        report[kind]["skipped"] += 1 - changed

    with _refused_as_invalid(), atomic(conn):
        known = {s.content_session_id for s in doc.sessions}
        # Rows that point at a session the file does not list still get one (with the
        # platform its observations name, if they name one).
        pointing: tuple[PromptRow | SummaryRow | ObservationRow, ...] = (
            *doc.prompts,
            *doc.summaries,
            *doc.observations,
        )
        implied = {
            r.content_session_id: r.project
            for r in pointing
            if r.content_session_id and r.content_session_id not in known
        }
        implied_platform = {
            o.content_session_id: o.platform_source
            for o in reversed(doc.observations)
            if o.content_session_id in implied and o.platform_source
        }
        for row in doc.sessions:
            start = _epoch(row.started_at_epoch, row.started_at)
            cur = conn.execute(
                "INSERT INTO sessions (content_session_id, project, platform_source, status,"
                " started_at, started_at_epoch, completed_at, completed_at_epoch, prompt_counter,"
                " project_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (content_session_id) DO NOTHING",
                (
                    row.content_session_id,
                    row.project,
                    row.platform_source,
                    row.status if row.status in ("active", "completed", "failed") else "completed",
                    iso_from_ms(start),
                    start,
                    row.completed_at,
                    row.completed_at_epoch,
                    row.prompt_counter,
                    row.project_key,
                ),
            )
            count("sessions", cur.rowcount)
        for csid, project in implied.items():
            platform = implied_platform.get(csid, DEFAULT_PLATFORM_SOURCE)
            session_store.ensure(conn, csid, project, platform)
        for p in doc.prompts:
            text = strip_private(p.prompt_text)[: session_store.MAX_PROMPT_CHARS]
            if not text:
                count("prompts", 0)
                continue
            ms = _epoch(p.created_at_epoch, p.created_at)
            cur = conn.execute(
                "INSERT INTO user_prompts (session_id, content_session_id, project,"
                " prompt_number, prompt_text, created_at, created_at_epoch)"
                " SELECT id, ?, ?, ?, ?, ?, ? FROM sessions WHERE content_session_id = ?"
                " ON CONFLICT (content_session_id, prompt_number) DO NOTHING",
                (
                    p.content_session_id,
                    p.project,
                    p.prompt_number,
                    text,
                    iso_from_ms(ms),
                    ms,
                    p.content_session_id,
                ),
            )
            count("prompts", cur.rowcount)
            conn.execute(
                "UPDATE sessions SET prompt_counter = max(prompt_counter, ?)"
                " WHERE content_session_id = ?",
                (p.prompt_number, p.content_session_id),
            )
        # Two lookups per row only when something was ever deleted here (most stores: never).
        any_deleted = deletions.any_deleted(conn)
        for o in doc.observations:
            created_ms = _epoch(o.created_at_epoch, o.created_at)
            if any_deleted and _forgotten(conn, o, created_ms):
                count("observations", 0)  # deleted here: an old export must not revive it
                continue
            draft = ObservationDraft(
                type=o.type,
                title=strip_private(o.title) or "untitled",
                subtitle=strip_private(o.subtitle),
                narrative=strip_private(o.narrative),
                facts=[strip_private(f) for f in o.facts],
                concepts=o.concepts,
                files_read=o.files_read,
                files_modified=o.files_modified,
            )
            _, created = obs_store.insert(
                conn,
                draft,
                content_session_id=o.content_session_id,
                project=o.project,
                prompt_number=o.prompt_number,
                discovery_tokens=o.discovery_tokens,
                generated_by=o.generated_by,
                agent_id=o.agent_id,
                agent_type=o.agent_type,
                created_ms=created_ms,
            )
            count("observations", int(created))
        for s in doc.summaries:
            exists = conn.execute(
                "SELECT 1 FROM session_summaries WHERE content_session_id = ?"
                " AND prompt_number = ?",
                (s.content_session_id, s.prompt_number),
            ).fetchone()
            if exists:
                count("summaries", 0)
                continue
            draft_s = SummaryDraft(
                **{f: strip_private(getattr(s, f)) for f in summary_store.TEXT_FIELDS},
                files_read=s.files_read,
                files_edited=s.files_edited,
            )
            summary_store.upsert(
                conn,
                draft_s,
                content_session_id=s.content_session_id,
                project=s.project,
                prompt_number=s.prompt_number,
                discovery_tokens=s.discovery_tokens,
                generated_by=s.generated_by,
                created_ms=_epoch(s.created_at_epoch, s.created_at),
            )
            count("summaries", 1)
    return report
