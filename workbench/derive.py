"""Deriving observations and summaries from events, once (the worker) or again (recompress).

Observations and summaries are a function of the events log and a compressor. ``derive``
handles one event: compress outside any transaction (a model call can take seconds), then
store the result and ack the event in one transaction, so a crash between the two leaves the
event claimed (re-queued at the next start) and never a half-stored result.

``recompress`` re-runs a compressor over past events and reports what changed, which the
original design cannot do because it keeps only the model's output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.compress.base import Compressor
from workbench.event_payloads import Summarize, ToolCall, parse
from workbench.models import CompressionResult, ObservationDraft, SummaryRequest, ToolEvent
from workbench.staleness import capture
from workbench.store import deletions, events, observations, sessions, summaries
from workbench.store.connection import atomic
from workbench.store.database import Store
from workbench.store.events import EventRow


@dataclass
class Derived:
    """What one event produced in the store."""

    observation_ids: list[int] = field(default_factory=list)
    created_ids: list[int] = field(default_factory=list)  # new rows (not dedup hits)
    summary_id: int | None = None
    discovery_tokens: int = 0


def compress_event(store: Store, compressor: Compressor, event: EventRow) -> CompressionResult:
    """Run the compressor for one event (no writes)."""
    conn = store.conn
    csid = event.content_session_id or ""
    prompt = sessions.prompt_text(conn, csid, event.prompt_number) or ""
    payload = parse(event.kind, event.payload)
    if isinstance(payload, ToolCall):
        return compressor.observe(
            ToolEvent(
                content_session_id=csid,
                project=event.project or "unknown",
                tool_name=payload.tool_name,
                tool_input=payload.tool_input,
                tool_response=payload.tool_response,
                cwd=payload.cwd,
                prompt_number=event.prompt_number,
                user_prompt=prompt,
                agent_id=payload.agent_id,
                agent_type=payload.agent_type,
            )
        )
    if isinstance(payload, Summarize):
        return compressor.summarize(
            SummaryRequest(
                content_session_id=csid,
                project=event.project or "unknown",
                prompt_number=event.prompt_number,
                user_prompt=prompt,
                last_assistant_message=payload.last_assistant_message,
                observations=observations.for_prompt(conn, csid, event.prompt_number),
            )
        )
    return CompressionResult(generated_by=compressor.name)


def store_result(
    store: Store, event: EventRow, result: CompressionResult, *, replace: bool = False
) -> Derived:
    """Write one event's result and ack it, in one transaction.

    ``replace`` (recompress) first removes the observations this event produced before that
    are not produced again, so re-deriving converges instead of piling up.
    """
    conn = store.conn
    payload = parse(event.kind, event.payload)
    call = payload if isinstance(payload, ToolCall) else None
    derived = Derived(discovery_tokens=result.discovery_tokens)
    # Outside the transaction: hashing the cited files reads them. Not on recompress: the
    # files now are not what the event saw, and a dedup hit keeps its first evidence.
    evidence = {} if replace else _evidence(result.observations, call.cwd if call else None)
    count = max(len(result.observations), 1)
    share = result.discovery_tokens // count  # split the cost over what it produced
    with atomic(conn):
        old_ids = {o.id for o in observations.for_event(conn, event.id)} if replace else set()
        # A memory a person deleted stays deleted: re-deriving its event skips it.
        for draft in deletions.keep_live(
            conn, event.content_session_id, result.observations, event_id=event.id
        ):
            obs_id, created = observations.insert(
                conn,
                draft,
                content_session_id=event.content_session_id,
                project=event.project or "unknown",
                prompt_number=event.prompt_number,
                event_id=event.id,
                discovery_tokens=share,
                generated_by=result.generated_by,
                agent_id=call.agent_id if call else None,
                agent_type=call.agent_type if call else None,
                created_ms=event.received_at_epoch,
            )
            derived.observation_ids.append(obs_id)
            if created:
                derived.created_ids.append(obs_id)
                capture.record(conn, obs_id, evidence.get(id(draft), []))
        if replace:
            observations.delete_ids(conn, old_ids - set(derived.observation_ids))
        if result.summary is not None and event.content_session_id:
            derived.summary_id = summaries.upsert(
                conn,
                result.summary,
                content_session_id=event.content_session_id,
                project=event.project or "unknown",
                prompt_number=event.prompt_number,
                event_id=event.id,
                discovery_tokens=result.discovery_tokens,
                generated_by=result.generated_by,
                created_ms=event.received_at_epoch,
            )
        events.ack(conn, event.id)
    return derived


def _evidence(drafts: list[ObservationDraft], cwd: str | None) -> dict[int, list[capture.Evidence]]:
    """Each draft's cited files as they are now (``workbench.staleness``), by draft identity.

    ``cwd`` is the typed tool call's (``event_payloads.ToolCall``), not the raw payload's.
    """
    where = cwd or ""
    return {
        id(draft): capture.capture([*draft.files_read, *draft.files_modified], where)
        for draft in drafts
    }


@dataclass
class RecompressReport:
    """What a recompress changed, for the CLI table and the API."""

    events: int = 0
    observations_before: int = 0
    observations_after: int = 0
    added: int = 0
    removed: int = 0
    unchanged: int = 0
    summaries: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "observationsBefore": self.observations_before,
            "observationsAfter": self.observations_after,
            "added": self.added,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "summaries": self.summaries,
            "failed": self.failed,
        }


def recompress(
    store: Store,
    compressor: Compressor,
    *,
    project: str | None = None,
    since_ms: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RecompressReport:
    """Re-derive observations and summaries for past events with ``compressor``."""
    from workbench.errors import CompressionError

    conn = store.conn
    todo = events.select_for_recompress(conn, project=project, since_ms=since_ms)
    report = RecompressReport(events=len(todo))
    for index, event in enumerate(todo, start=1):
        before = {o.content_hash for o in observations.for_event(conn, event.id)}
        report.observations_before += len(before)
        try:
            result = compress_event(store, compressor, event)
        except CompressionError as exc:
            report.failed.append({"eventId": event.id, "reason": exc.message})
            report.observations_after += len(before)
            report.unchanged += len(before)
            continue
        derived = store_result(store, event, result, replace=True)
        after = {o.content_hash for o in observations.for_event(conn, event.id)}
        report.observations_after += len(after)
        report.added += len(after - before)
        report.removed += len(before - after)
        report.unchanged += len(before & after)
        report.summaries += int(derived.summary_id is not None)
        if progress:
            progress(index, len(todo))
    return report
