"""Accepting one hook event: redact, apply the skip rules, dedup, append, enqueue.

This is the whole synchronous part of ingest, shared by the HTTP routes and by spool replay so
both follow the same rules. It never calls a compressor: it appends the event (and the few rows
that must exist at once, such as the session and the prompt) in one transaction and returns,
so a hook's request is answered in about a millisecond. The worker does the rest.

Every string that reaches the log is redacted here again, identifiers and keys included
(the service's request boundary did it already; this covers spool replay and in-process
callers): ``_text`` for the plain fields, ``redact_value`` for the tool payloads.

Skips are answered with a stated reason (``status="skipped"``) and store nothing:
- every project while capture is paused (settings.json unreadable, so the exclusions are
  unknown: ``Settings.capture_paused``);
- an excluded project (glob list, matched on the full cwd or the project name);
- a skipped tool (settings ``skipped_tools``);
- workbench's own MCP tools and the agent's tool discovery (``own_tools``): never memories;
- a private prompt, and the observations and summary that belong to it;
- a prompt that is only a ``<task-notification>`` block.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from workbench import own_tools
from workbench.clock import now_ms
from workbench.errors import InvalidInput
from workbench.event_payloads import MemorySave, SessionEnd, SessionInit, Summarize, ToolCall
from workbench.locate import is_excluded, project_identity
from workbench.models import ObservationDraft, Session
from workbench.platforms import DEFAULT_PLATFORM_SOURCE
from workbench.redact import is_task_notification, redact_value, strip_private
from workbench.settings import Settings
from workbench.store import events, observations, sessions
from workbench.store.connection import atomic
from workbench.store.database import Store

Status = Literal["queued", "stored", "duplicate", "skipped"]
ELISION = "\n[… {n} chars elided by workbench …]\n"


@dataclass(frozen=True)
class IngestResult:
    """What happened to one event; ``to_json`` is the HTTP response body."""

    status: Status
    reason: str | None = None
    event_id: int | None = None
    session_id: int | None = None
    prompt_number: int | None = None
    observation_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": self.status}
        for key, value in (
            ("reason", self.reason),
            ("eventId", self.event_id),
            ("sessionDbId", self.session_id),
            ("promptNumber", self.prompt_number),
            ("id", self.observation_id),
        ):
            if value is not None:
                body[key] = value
        return body


def bound(value: Any, limit: int) -> Any:
    """Elide the middle of any string longer than ``limit`` so one event stays bounded."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        head, tail = value[: limit * 3 // 4], value[-limit // 4 :]
        return head + ELISION.format(n=len(value) - len(head) - len(tail)) + tail
    if isinstance(value, list):
        return [bound(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: bound(v, limit) for k, v in value.items()}
    return value


Listener = Callable[[str, dict[str, Any]], None]


def _text(value: str) -> str:
    """One plain string field without its private blocks (unchanged when it has none)."""
    cleaned: str = redact_value(value)
    return cleaned


def _maybe(value: str | None) -> str | None:
    return None if value is None else _text(value)


def _already_received(conn: sqlite3.Connection, event_key: str | None) -> IngestResult | None:
    """The answer for an event whose idempotency key is already in the log, else None."""
    existing = events.find_by_key(conn, event_key) if event_key else None
    if existing is None:
        return None
    return IngestResult("duplicate", reason="event already received", event_id=existing)


class Ingestor:
    """The synchronous half of ingest over one store.

    ``notify`` wakes the worker; ``listener(kind, data)`` is told what was committed
    (``session_started``, ``new_prompt``, ``session_completed``, ``new_observation``,
    ``queued``) so live clients can follow along. Both run after the transaction commits.
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        notify: Callable[[], None] | None = None,
        listener: Listener | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.notify = notify or (lambda: None)
        self.listener: Listener = listener or (lambda kind, data: None)

    def _queued(self, event_id: int, session: Session) -> IngestResult:
        """After an enqueue commits: wake the worker, tell live clients, answer the hook."""
        self.notify()
        self.listener("queued", {"eventId": event_id, "project": session.project})
        return IngestResult(
            "queued", event_id=event_id, session_id=session.id, prompt_number=session.prompt_counter
        )

    # ----- rules ------------------------------------------------------------------------------
    def excluded(self, project: str, cwd: str = "") -> bool:
        """True when the project (or the full cwd) matches an ``excluded_projects`` glob."""
        return is_excluded(self.settings.excluded_projects, project, cwd)

    def exclusion(self, project: str, cwd: str = "") -> str | None:
        """Why this project's events are not captured (fails closed), else None."""
        paused = self.settings.capture_paused
        if paused is not None:
            return paused
        return f"project {project!r} is excluded" if self.excluded(project, cwd) else None

    def _clean(self, value: Any) -> Any:
        return bound(redact_value(value), self.settings.max_field_chars)

    # ----- events -----------------------------------------------------------------------------
    def session_init(
        self,
        *,
        content_session_id: str,
        project: str,
        prompt: str | None,
        platform_source: str = "claude-code",
        event_key: str | None = None,
        project_key: str | None = None,
        at_ms: int | None = None,
    ) -> IngestResult:
        """A new user prompt: count it, store its cleaned text unless it is private.

        ``at_ms``: when the prompt was written, for history read from an agent's transcript
        (``workbench.transcripts``); hooks leave it out and the prompt is timed now.

        ``project_key``: which folder the project is (the hook's ``locate.project_identity``);
        a new session is keyed by it, so two folders named alike never share memory.

        The private rule: ``""`` is how the hook announces a prompt that was entirely
        ``<private>`` (it strips the text before sending), and so is text that strips to
        nothing here; that prompt is counted, and its tool calls and summary are skipped.
        No prompt at all (None, or only whitespace) is not a private prompt: the session is
        opened and nothing is counted, so the rest of the session is still captured.
        """
        content_session_id, project = _text(content_session_id), _text(project)
        platform_source, project_key = _text(platform_source), _maybe(project_key)
        if (excluded := self.exclusion(project)) is not None:
            return IngestResult("skipped", reason=excluded)
        if prompt is None or (prompt and not prompt.strip()):
            return self._open_session(
                content_session_id, project, platform_source, project_key, at_ms
            )
        if is_task_notification(prompt):
            return IngestResult("skipped", reason="task notification, not a user prompt")
        cleaned = strip_private(prompt)
        conn = self.store.conn
        with atomic(conn):
            if (seen := _already_received(conn, event_key)) is not None:
                return seen
            ms = at_ms if at_ms is not None else now_ms()
            new_session = sessions.get(conn, content_session_id) is None
            session = sessions.ensure(
                conn, content_session_id, project, platform_source, ms, project_key
            )
            number, prompt_id, duplicate = sessions.record_prompt(conn, session, cleaned, ms)
            if duplicate:
                return IngestResult(
                    "duplicate",
                    reason="same prompt within 10 s",
                    session_id=session.id,
                    prompt_number=number,
                )
            # The payload never holds private text: only the cleaned prompt is logged.
            event_id, _ = events.append(
                conn,
                SessionInit.KIND,
                SessionInit(project, cleaned, platform_source).to_wire(),
                event_key=event_key,
                content_session_id=content_session_id,
                project=project,
                prompt_number=number,
                enqueue=False,
                received_ms=ms,
            )
        if new_session:
            self._announce_session(content_session_id, project, session.id)
        if cleaned:
            self.listener(
                "new_prompt",
                {
                    "id": prompt_id,
                    "contentSessionId": content_session_id,
                    "project": project,
                    "promptNumber": number,
                },
            )
        if not cleaned:
            return IngestResult(
                "skipped",
                reason="private prompt: nothing stored",
                event_id=event_id,
                session_id=session.id,
                prompt_number=number,
            )
        return IngestResult(
            "stored", event_id=event_id, session_id=session.id, prompt_number=number
        )

    def _announce_session(self, content_session_id: str, project: str, session_id: int) -> None:
        """Tell live clients (the viewer's stream) that a session was just opened."""
        self.listener(
            "session_started",
            {"contentSessionId": content_session_id, "project": project, "sessionDbId": session_id},
        )

    def _open_session(
        self,
        content_session_id: str,
        project: str,
        platform_source: str,
        project_key: str | None = None,
        at_ms: int | None = None,
    ) -> IngestResult:
        """Make sure the session exists (its project and platform), counting no prompt."""
        conn = self.store.conn
        with atomic(conn):
            new_session = sessions.get(conn, content_session_id) is None
            ms = at_ms if at_ms is not None else now_ms()
            session = sessions.ensure(
                conn, content_session_id, project, platform_source, ms, project_key
            )
        if new_session:
            self._announce_session(content_session_id, project, session.id)
        return IngestResult(
            "skipped",
            reason="no prompt text: session opened, no prompt counted",
            session_id=session.id,
            prompt_number=session.prompt_counter,
        )

    def observation(
        self,
        *,
        content_session_id: str,
        tool_name: str,
        tool_input: Any,
        tool_response: Any,
        cwd: str = "",
        tool_use_id: str | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        event_key: str | None = None,
        at_ms: int | None = None,
    ) -> IngestResult:
        """One tool call: enqueue it for compression unless a rule skips it.

        ``at_ms``: when the call was made (a transcript's history); hooks leave it out.
        """
        content_session_id, tool_name, cwd = _text(content_session_id), _text(tool_name), _text(cwd)
        tool_use_id, agent_id = _maybe(tool_use_id), _maybe(agent_id)
        agent_type = _maybe(agent_type)
        project, project_key = project_identity(cwd)
        if tool_name in self.settings.skipped_tools:
            return IngestResult("skipped", reason=f"tool {tool_name!r} is skipped")
        if (not_memory := own_tools.skip_reason(tool_name)) is not None:
            return IngestResult("skipped", reason=not_memory)
        if (excluded := self.exclusion(project, cwd)) is not None:
            return IngestResult("skipped", reason=excluded)
        # Claude Code's tool_use_id names the call itself, so it beats the hook's own key: a
        # call delivered twice (hook retried, spool replayed, demo re-run) is one event.
        key = f"tool:{content_session_id}:{tool_use_id}" if tool_use_id else event_key
        conn = self.store.conn
        with atomic(conn):
            if (seen := _already_received(conn, key)) is not None:
                return seen
            ms = at_ms if at_ms is not None else now_ms()
            session = sessions.get(conn, content_session_id) or sessions.ensure(
                conn, content_session_id, project, at_ms=ms, project_key=project_key
            )
            if sessions.current_prompt_is_private(conn, session):
                return IngestResult(
                    "skipped", reason="belongs to a private prompt", session_id=session.id
                )
            call = ToolCall(
                tool_name=tool_name,
                tool_input=self._clean(tool_input),
                tool_response=self._clean(tool_response),
                cwd=cwd,
                tool_use_id=tool_use_id,
                agent_id=agent_id,
                agent_type=agent_type,
            )
            event_id, _ = events.append(
                conn,
                ToolCall.KIND,
                call.to_wire(),
                event_key=key,
                content_session_id=content_session_id,
                project=session.project,
                prompt_number=session.prompt_counter,
                enqueue=True,
                received_ms=ms,
            )
        return self._queued(event_id, session)

    def summarize(
        self,
        *,
        content_session_id: str,
        last_assistant_message: str = "",
        event_key: str | None = None,
        at_ms: int | None = None,
    ) -> IngestResult:
        """End of a prompt's turn (Stop): enqueue a summary of that prompt (``at_ms``: when,
        for a transcript's history)."""
        content_session_id = _text(content_session_id)
        conn = self.store.conn
        with atomic(conn):
            if (seen := _already_received(conn, event_key)) is not None:
                return seen
            session = sessions.get(conn, content_session_id)
            if session is None:
                return IngestResult("skipped", reason="unknown session: no prompt was recorded")
            if (excluded := self.exclusion(session.project)) is not None:
                return IngestResult("skipped", reason=excluded)
            if sessions.current_prompt_is_private(conn, session):
                return IngestResult(
                    "skipped", reason="belongs to a private prompt", session_id=session.id
                )
            event_id, _ = events.append(
                conn,
                Summarize.KIND,
                Summarize(self._clean(strip_private(last_assistant_message))).to_wire(),
                event_key=event_key,
                content_session_id=content_session_id,
                project=session.project,
                prompt_number=session.prompt_counter,
                enqueue=True,
                received_ms=at_ms,
            )
        return self._queued(event_id, session)

    def session_end(
        self, *, content_session_id: str, reason: str = "", event_key: str | None = None
    ) -> IngestResult:
        """SessionEnd: mark the session completed, once per end.

        An end whose session's latest event already is its end is a duplicate (issue 20,
        item 12: Gemini CLI's ``/quit`` sent SessionEnd three times, each hook run with its
        own idempotency key). Anything after an end (a resumed session's prompt) makes the
        next end a new one. Spool replay comes through here too, so ends spooled while the
        service was down are deduplicated the same way; the log stays append-only.
        """
        content_session_id, reason = _text(content_session_id), _text(reason)
        conn = self.store.conn
        with atomic(conn):
            if (seen := _already_received(conn, event_key)) is not None:
                return seen
            session = sessions.get(conn, content_session_id)
            if session is None:
                return IngestResult("skipped", reason="unknown session")
            if (excluded := self.exclusion(session.project)) is not None:
                return IngestResult("skipped", reason=excluded)
            last = events.last_of_session(conn, content_session_id)
            if last is not None and last[1] == "session_end":
                return IngestResult(
                    "duplicate",
                    reason="the session already ended: one session end is one event",
                    event_id=last[0],
                    session_id=session.id,
                )
            ms = now_ms()
            sessions.end(conn, content_session_id, "completed", ms)
            event_id, _ = events.append(
                conn,
                SessionEnd.KIND,
                SessionEnd(reason).to_wire(),
                event_key=event_key,
                content_session_id=content_session_id,
                project=session.project,
                prompt_number=session.prompt_counter,
                enqueue=False,
                received_ms=ms,
            )
        self.listener(
            "session_completed",
            {
                "contentSessionId": content_session_id,
                "project": session.project,
                "sessionDbId": session.id,
            },
        )
        return IngestResult("stored", event_id=event_id, session_id=session.id)

    def memory_save(
        self,
        *,
        text: str,
        title: str | None = None,
        project: str | None = None,
        event_key: str | None = None,
        project_key: str | None = None,
        platform_source: str = DEFAULT_PLATFORM_SOURCE,
    ) -> IngestResult:
        """A memory saved by hand (MCP ``save_memory``, CLI): stored at once, id returned.

        ``project_key`` (the MCP server's folder) puts it in that folder's memory; without
        one it is keyed by its project name, found by name but shown to no session.
        ``platform_source``: the agent whose MCP server saved it (``workbench mcp
        --platform``); kept in the event too when it is not Claude Code's, the default.
        """
        cleaned = strip_private(text)
        if not cleaned:
            raise InvalidInput(
                "nothing to save: the text is empty after removing private blocks; "
                "send the memory text outside <private> tags"
            )
        clean_title = strip_private(title or "") or cleaned.splitlines()[0][:80]
        name = _text(project or "") or "manual"
        draft = ObservationDraft(
            type="discovery", title=clean_title, narrative=cleaned, concepts=["manual"]
        )
        conn = self.store.conn
        with atomic(conn):
            if (seen := _already_received(conn, event_key)) is not None:
                return seen
            saved = MemorySave(
                cleaned,
                clean_title,
                name,
                platform_source if platform_source != DEFAULT_PLATFORM_SOURCE else None,
            )
            event_id, _ = events.append(
                conn,
                MemorySave.KIND,
                saved.to_wire(),
                event_key=event_key,
                content_session_id=None,
                project=name,
                enqueue=False,
            )
            obs_id, created = observations.insert(
                conn,
                draft,
                content_session_id=None,
                project=name,
                event_id=event_id,
                generated_by="manual",
                project_key=_maybe(project_key),
                platform_source=platform_source,
            )
        if created:
            self.listener("new_observation", {"id": obs_id, "project": name})
        return IngestResult(
            "stored" if created else "duplicate", event_id=event_id, observation_id=obs_id
        )
