"""An event a hook spooled reaches the store before the later events of its session that
reached the service directly.

The report (CI, ``tests/test_real_opencode.py::test_a_cold_start_still_injects_the_memory``):
a session's start spawned the service; its prompt's hook ran while the service was still
starting (after the service's start-up replay, before it listened) and spooled the prompt;
the tool call and the Stop a moment later were delivered at once. The prompt waited for the
next periodic replay (30 s), so the session's tool call and Stop were stored under prompt 0,
before the prompt that caused them, and the Stop of prompt 1 never existed.

Here the same thing with real hook processes against a real service: the prompt's hook runs
with a port nothing listens on (it spools into the data dir, as a hook does that finds the
service not up yet), then the tool call's and the Stop's hooks reach the running service.
The periodic replay is set to an hour, so only the service's own ordering can save it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service import replay
from tests.conftest import base_env, free_port
from tests.hook_harness import load_payload, run_hook, script_for, spooled
from tests.test_crash import query
from workbench import spool
from workbench.errors import SpoolReplaying
from workbench.ingest import Ingestor
from workbench.settings import load_settings
from workbench.store.database import Store

SESSION = "3f2b8c1e-7d4a-4e9b-a6c2-1b5e9d0f4a7c"  # the fixtures' session


def stored_events(data_dir: Path) -> list[tuple[str, int]]:
    return query(
        data_dir,
        "SELECT kind, prompt_number FROM events WHERE content_session_id = ? ORDER BY id",
        (SESSION,),
    )


def test_a_spooled_prompt_is_stored_before_its_sessions_later_events(
    tmp_path: Path, data_dir: Path, make_service: Any
) -> None:
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")
    prompt = load_payload("user_prompt_submit", tmp_path)
    assert run_hook(script_for(prompt), prompt, base_env(data_dir, free_port())).output() == {}
    assert len(spooled(data_dir)) == 1  # the service did not take it: it is on disk

    for name in ("post_tool_use_read", "stop"):
        payload = load_payload(name, tmp_path)
        run_hook(script_for(payload), payload, svc.env).output()

    assert stored_events(data_dir) == [
        ("session_init", 1),
        ("observation", 1),
        ("summarize", 1),
    ]
    assert spooled(data_dir) == []


def test_a_spooled_event_of_another_session_is_stored_first_too(
    tmp_path: Path, data_dir: Path, make_service: Any
) -> None:
    """Capture order across sessions: what was captured first is stored first, whichever
    session a live event belongs to (the spool is one queue, replayed in capture order)."""
    svc = make_service(WORKBENCH_SPOOL_REPLAY_INTERVAL_S="3600")
    other = {**load_payload("user_prompt_submit", tmp_path), "session_id": "another-session"}
    run_hook(script_for(other), other, base_env(data_dir, free_port())).output()
    prompt = load_payload("user_prompt_submit", tmp_path)
    run_hook(script_for(prompt), prompt, svc.env).output()

    order = query(data_dir, "SELECT content_session_id FROM events ORDER BY id")
    assert order == [("another-session",), (SESSION,)]


def spool_prompts(ingestor: Ingestor, n: int) -> list[str]:
    """``n`` prompts of ``n`` sessions, spooled the way a hook spools them; their keys."""
    keys = []
    for i in range(n):
        key = spool.new_event_key()
        body = {"contentSessionId": f"s{i}", "project": "p", "prompt": f"prompt {i}"}
        spool.write(ingestor.settings.spool_dir, spool.Envelope(key, "/api/sessions/init", body))
        keys.append(key)
    return keys


def test_past_its_time_budget_the_live_event_is_refused_to_wait_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long outage's spool is not replayed inside one hook's request: past the budget the
    live event gets a 503 (the hook spools it behind the rest); within it, all goes first."""
    settings = load_settings(tmp_path, compressor="offline")
    with Store(settings.db_path) as store:
        ingestor = Ingestor(store, settings)
        keys = spool_prompts(ingestor, 5)
        ahead = replay.ReplayAhead(ingestor)
        monkeypatch.setattr(replay, "AHEAD_BUDGET_S", -1.0)
        with pytest.raises(SpoolReplaying, match="5 spooled events are still being replayed"):
            ahead()
        assert spool.pending_names(settings.spool_dir) == [f"{k}.json" for k in keys]

        monkeypatch.setattr(replay, "AHEAD_BUDGET_S", 60.0)
        ahead()
        assert spool.pending_names(settings.spool_dir) == []
        stored = store.conn.execute("SELECT event_key FROM events ORDER BY id").fetchall()
        assert [row[0] for row in stored] == keys
        assert ahead.last is not None
        assert ahead.last.replayed == 5
