"""Replay demo sessions through the real capture pipeline, in-process, on a replayed clock.

Each session becomes the exact hook payloads Claude Code would send (``workbench.demo``), each
payload goes through its hook's own ``build_body`` (redaction, field mapping, the Stop hook
reading the last assistant message from the transcript), the body is validated by the
service's request model and handed to the real ``Ingestor`` (skip rules, dedup, the events
log, the queue), and the queue is drained with the offline compressor through
``derive.compress_event`` / ``store_result``, as the worker does. Only HTTP and the worker
thread are left out, so weeks of history replay in about a second.

Time: every call is stamped with its scheduled moment through ``workbench.clock.
replayed_clock``, so sessions, prompts, observations and summaries carry the times the
sessions happened. Event keys are derived from the session and the call's position, so two
runs produce the same store and the same export.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hooks import post_tool_use, session_end, stop, user_prompt_submit
from hooks._runtime import HookInput
from service.schemas import SessionEnd, SessionInit, Summarize, ToolObservation
from workbench import demo
from workbench.clock import iso_from_ms, replayed_clock
from workbench.compress.offline import OfflineCompressor
from workbench.derive import compress_event, store_result
from workbench.ingest import Ingestor
from workbench.settings import DEFAULT_SKIPPED_TOOLS, load_settings
from workbench.store import events, transfer
from workbench.store.database import Store

# hook event -> (the hook's body builder, the service's request model)
ROUTES: dict[str, tuple[Any, Any]] = {
    "UserPromptSubmit": (user_prompt_submit.build_body, SessionInit),
    "PostToolUse": (post_tool_use.build_body, ToolObservation),
    "Stop": (stop.build_body, Summarize),
    "SessionEnd": (session_end.build_body, SessionEnd),
}


@dataclass
class Clock:
    """The replayed time in epoch ms; the pipeline reads it through ``now_ms``."""

    ms: int

    def __call__(self) -> int:
        return self.ms


def gaps(event: str, first_prompt: bool, rng: random.Random) -> int:
    """Seconds since the previous call: people think between prompts, tools take a moment."""
    if event == "UserPromptSubmit":
        return rng.randint(8, 40) if first_prompt else rng.randint(90, 840)
    if event == "PostToolUse":
        return rng.randint(4, 75)
    if event == "Stop":
        return rng.randint(6, 40)
    if event == "SessionEnd":
        return rng.randint(20, 180)
    return 0


def replay(sessions: Iterable[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Run ``sessions`` (each with ``session_id`` and ``start_ms``) and return the export."""
    with tempfile.TemporaryDirectory(prefix="workbench-demo-gen-") as tmp:
        root = Path(tmp)
        # Every rule that shapes the output is pinned here, so no WORKBENCH_* variable of the
        # machine running the generator can change the file it writes.
        settings = load_settings(
            root / "data",
            compressor="offline",
            excluded_projects=[],
            skipped_tools=list(DEFAULT_SKIPPED_TOOLS),
            max_field_chars=20_000,
            embedder="none",
        )
        settings.ensure_dirs()
        clock = Clock(0)
        with Store(settings.db_path) as store, replayed_clock(clock):
            ingestor = Ingestor(store, settings)
            compressor = OfflineCompressor()
            transcripts = root / "transcripts"
            transcripts.mkdir()
            for item in sessions:
                _replay_session(item, ingestor, store, compressor, clock, transcripts, seed)
            document = transfer.export(store.conn)
            document["exported_at"] = iso_from_ms(clock.ms)
    return document


def _replay_session(
    item: dict[str, Any],
    ingestor: Ingestor,
    store: Store,
    compressor: OfflineCompressor,
    clock: Clock,
    transcripts: Path,
    seed: int,
) -> None:
    rng = random.Random(f"{seed}:{item['session_id']}:gaps")
    clock.ms = item["start_ms"]
    prompts = 0
    # ``hook_payloads`` writes the transcript as it goes, so it is consumed lazily: the Stop
    # hook must read the transcript as it stands at that moment.
    for index, call in enumerate(demo.hook_payloads(item, transcripts)):
        clock.ms += 1000 * gaps(call.event, prompts == 0, rng) + rng.randint(0, 999)
        prompts += call.event == "UserPromptSubmit"
        route = ROUTES.get(call.event)
        if route is None:  # SessionStart only asks for context; it stores nothing
            continue
        build, model = route
        body = build(HookInput(call.payload))
        if body is None:
            continue
        model.model_validate(body).ingest(ingestor, f"demo:{item['session_id']}:{index}")
        _drain(store, compressor)


def _drain(store: Store, compressor: OfflineCompressor) -> None:
    """What the worker does, in order, until the queue is empty."""
    while batch := events.claim(store.conn, limit=64):
        for event in batch:
            store_result(store, event, compress_event(store, compressor, event))
