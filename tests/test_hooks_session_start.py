"""The SessionStart hook: context and replay when the service is up, leaving a foreign server
alone, and spawning the service when it is down (with the service cold, the block comes from
the store: tests/test_hooks_cold_start.py, which also covers another hook's spawn lock).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, base_env
from tests.hook_harness import (
    Recorder,
    _stop_detached,
    _wait_for_health,
    load_payload,
    needs_service,
    run_hook,
)
from workbench import locate

# ----- SessionStart ----------------------------------------------------------------------------


def test_session_start_injects_context_and_asks_for_replay(
    data_dir: Path, recorder: Recorder
) -> None:
    context = "<workbench-context>\n# acme-api: recent memory\n- fixed token expiry\n"
    recorder.replies["/api/context/inject"] = (200, context.encode())
    run = run_hook(
        "session_start", load_payload("session_start_startup"), base_env(data_dir, recorder.port)
    )
    assert run.output() == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context.strip(),
        }
    }
    session = load_payload("session_start_startup")["session_id"]
    assert [(r.method, r.path) for r in recorder.requests] == [
        ("GET", "/api/health"),
        ("POST", "/api/spool/replay"),
        (
            "GET",
            "/api/context/inject?projects=acme-api&project_key=%2Fhome%2Fdev%2Fcode%2Facme-api"
            f"&contentSessionId={session}&source=startup",
        ),
    ]
    assert not (data_dir / "spawn.lock").exists()  # it was up: nothing to spawn


@pytest.mark.parametrize(
    "reply", [(404, b'{"detail": "Not Found"}'), (200, b"  \n"), (500, b"boom")]
)
def test_session_start_without_context_prints_empty_object(
    reply: tuple[int, bytes], data_dir: Path, recorder: Recorder
) -> None:
    recorder.replies["/api/context/inject"] = reply
    recorder.replies["/api/spool/replay"] = (404, b'{"detail": "Not Found"}')
    run = run_hook(
        "session_start", load_payload("session_start_startup"), base_env(data_dir, recorder.port)
    )
    assert run.output() == {}


def test_session_start_leaves_a_foreign_server_alone(data_dir: Path, recorder: Recorder) -> None:
    recorder.replies["/api/health"] = (200, b'{"status": "ok", "service": "something-else"}')
    run = run_hook(
        "session_start", load_payload("session_start_startup"), base_env(data_dir, recorder.port)
    )
    assert run.output() == {}
    assert [r.path for r in recorder.requests] == ["/api/health"]
    assert not (data_dir / "spawn.lock").exists()
    assert not (data_dir / "logs").exists()


@needs_service
def test_session_start_spawns_the_service_when_down(data_dir: Path, make_service: Any) -> None:
    svc: Service = make_service(start=False)
    run = run_hook("session_start", load_payload("session_start_startup"), svc.env)
    try:
        output = run.output()
        assert output == {} or output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        health = _wait_for_health(svc, timeout=30)
        assert health["service"] == "workbench"
        assert int((data_dir / "service.pid").read_text("utf-8").strip()) == health["pid"]
        assert (data_dir / "logs" / "service.log").exists()
    finally:
        _stop_detached(svc, data_dir)


# ----- what each SessionStart source injects (real service, real hook subprocesses) -----------


def _save(svc: Service, title: str) -> None:
    project, key = locate.project_identity(load_payload("session_start_startup")["cwd"])
    status, body = svc.post(
        "/api/memory/save",
        {"text": f"{title}: details", "title": title, "project": project, "projectKey": key},
    )
    assert status == 200, body


def _start(svc: Service, source: str, session: str = "resumable-session-1") -> str:
    """Run the real SessionStart hook with ``source``; the context it printed, or ``""``."""
    payload = {**load_payload("session_start_startup"), "source": source, "session_id": session}
    output = run_hook("session_start", payload, svc.env).output()
    assert output is not None
    if output == {}:
        return ""
    context: str = output["hookSpecificOutput"]["additionalContext"]
    return context


@needs_service
def test_a_resumed_session_is_not_given_the_same_memory_twice(service: Service) -> None:
    _save(service, "token expiry fixed")
    first = _start(service, "startup")
    assert "token expiry fixed" in first
    # Claude Code's --continue: the conversation already holds the block above.
    assert _start(service, "resume") == ""


@needs_service
def test_a_resumed_session_is_given_only_what_is_new_since_its_block(service: Service) -> None:
    _save(service, "token expiry fixed")
    assert "token expiry fixed" in _start(service, "startup")
    _save(service, "rate limiter added")  # another session's work, after this one's block
    resumed = _start(service, "resume")
    assert "rate limiter added" in resumed
    assert "token expiry fixed" not in resumed
    assert _start(service, "resume") == ""  # and that news only once


@needs_service
@pytest.mark.parametrize("source", ["compact", "clear", "startup", "banana", "", "RESUME?"])
def test_compact_clear_and_unknown_sources_give_the_full_block(
    source: str, service: Service
) -> None:
    _save(service, "token expiry fixed")
    assert "token expiry fixed" in _start(service, "startup")
    _save(service, "rate limiter added")
    again = _start(service, source)
    assert "token expiry fixed" in again
    assert "rate limiter added" in again


@needs_service
def test_a_resume_the_service_never_gave_a_block_gets_the_full_block(service: Service) -> None:
    _save(service, "token expiry fixed")
    assert "token expiry fixed" in _start(service, "resume", session="never-seen-before")


@needs_service
def test_a_resumed_session_is_not_shown_its_own_work_again(service: Service) -> None:
    """What the session itself did after its block is in its conversation: only other
    sessions' work is news to it."""
    _save(service, "token expiry fixed")
    assert "token expiry fixed" in _start(service, "startup")
    for session in ("resumable-session-1", "another-session"):
        edit = {**load_payload("post_tool_use_edit"), "session_id": session}
        assert run_hook("post_tool_use", edit, service.env).returncode == 0
    service.wait_idle()
    status, body = service.get("/api/observations?project=acme-api&limit=50")
    assert status == 200, body
    made = {o["content_session_id"]: o["id"] for o in body["items"] if o["content_session_id"]}
    assert set(made) == {"resumable-session-1", "another-session"}, body
    resumed = _start(service, "resume")
    assert f"#{made['another-session']} " in resumed
    assert f"#{made['resumable-session-1']} " not in resumed
