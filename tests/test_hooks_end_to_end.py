"""End to end: hook → the real ``python -m service`` → rows; the spool replays exactly once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hooks import _runtime, post_tool_use, session_end, stop, user_prompt_submit
from tests.conftest import Service, base_env, free_port
from tests.hook_harness import (
    DELIVERING,
    ROUTE_FOR_SCRIPT,
    SECRET,
    all_bytes,
    load_payload,
    needs_service,
    run_hook,
    script_for,
    spooled,
)
from workbench import spool

# ----- end to end: hook → real service → rows --------------------------------------------------


@needs_service
def test_fixture_bodies_are_accepted_by_the_real_service(tmp_path: Path, service: Service) -> None:
    """The contract check a 4xx-drop could otherwise hide: every body we build is valid."""
    builders = {
        "user_prompt_submit": user_prompt_submit.build_body,
        "post_tool_use": post_tool_use.build_body,
        "stop": stop.build_body,
        "session_end": session_end.build_body,
    }
    for name in DELIVERING:
        payload = load_payload(name, tmp_path)
        script = script_for(payload)
        body = builders[script](_runtime.HookInput(payload))
        key = spool.new_event_key()
        status, reply = service.post(
            ROUTE_FOR_SCRIPT[script], body, headers={"Idempotency-Key": key}
        )
        assert 200 <= status < 300, (name, status, reply)
        again, reply2 = service.post(
            ROUTE_FOR_SCRIPT[script], body, headers={"Idempotency-Key": key}
        )
        assert 200 <= again < 300, (name, reply2)
        # A skipped tool (TodoWrite) stores nothing, so there is nothing to be a duplicate of.
        expected = "skipped" if reply.get("status") == "skipped" else "duplicate"
        assert reply2.get("status") == expected, (name, reply, reply2)


@needs_service
def test_hooks_end_to_end_store_the_session(
    tmp_path: Path, data_dir: Path, service: Service
) -> None:
    for name in (
        "user_prompt_submit",
        "post_tool_use_read",
        "post_tool_use_edit",
        "post_tool_use_bash_pytest_fail",
        "post_tool_use_todowrite",
        "stop",
        "session_end",
    ):
        payload = load_payload(name, tmp_path)
        assert run_hook(script_for(payload), payload, service.env).output() == {}
    assert spooled(data_dir) == []  # everything was delivered
    status, prompts = service.get("/api/prompts")
    assert status == 200
    (prompt,) = prompts["items"]
    assert prompt["prompt_text"] == load_payload("user_prompt_submit")["prompt"]
    assert prompt["project"] == "acme-api"
    assert prompt["content_session_id"] == load_payload("user_prompt_submit")["session_id"]


@needs_service
def test_hooks_end_to_end_produce_observations(tmp_path: Path, service: Service) -> None:
    for name in (
        "user_prompt_submit",
        "post_tool_use_read",
        "post_tool_use_edit",
        "post_tool_use_bash_pytest_fail",
        "stop",
    ):
        payload = load_payload(name, tmp_path)
        run_hook(script_for(payload), payload, service.env).output()
    service.wait_idle()
    status, page = service.get("/api/observations")
    assert status == 200, page
    assert page["items"], page
    assert "auth.py" in json.dumps(page["items"])


@needs_service
def test_private_prompt_never_reaches_the_store(data_dir: Path, service: Service) -> None:
    payload = load_payload("user_prompt_submit_private")
    run_hook("user_prompt_submit", payload, service.env).output()
    run_hook(
        "user_prompt_submit", {**payload, "prompt": f"<private>{SECRET}</private>"}, service.env
    ).output()
    _, prompts = service.get("/api/prompts")
    assert SECRET not in json.dumps(prompts)
    assert SECRET.encode() not in all_bytes(data_dir)


@needs_service
def test_spooled_events_replay_once_and_only_once(
    tmp_path: Path, data_dir: Path, make_service: Any
) -> None:
    port = free_port()
    env = base_env(data_dir, port)
    names = ("user_prompt_submit", "post_tool_use_edit", "stop", "session_end")
    for name in names:
        payload = load_payload(name, tmp_path)
        run_hook(script_for(payload), payload, env).output()
    assert len(spooled(data_dir)) == len(names)

    svc: Service = make_service(port)  # replays the spool as it starts
    status, report = svc.post("/api/spool/replay")
    assert status == 200, report
    assert spooled(data_dir) == []
    _, prompts = svc.get("/api/prompts")
    assert len(prompts["items"]) == 1

    # A replay of events the service already has (say, a copy restored from a backup).
    processed = data_dir / "spool" / "processed"
    for item in sorted(processed.iterdir()):
        shutil.copyfile(item, data_dir / "spool" / item.name)
    status, report = svc.post("/api/spool/replay")
    assert status == 200, report
    assert report["duplicates"] == len(names), report
    _, again = svc.get("/api/prompts")
    assert again["items"] == prompts["items"]
