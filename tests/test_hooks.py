"""The hooks as Claude Code runs them: real subprocesses fed real-shaped payloads.

Here: the payload fixtures themselves, and the fail-open output contract of every script
(exit 0, one JSON line, malformed stdin a no-op). The rest, one file per script or part of
``hooks/_runtime.py``: test_hooks_spool.py (service down), test_hooks_delivery.py (status
codes, headers, the raw-socket client), test_hooks_session_start.py, test_hooks_stop.py
(the transcript reader) and test_hooks_end_to_end.py (the real service). Their shared helpers
and the ``Recorder`` peer are in tests/hook_harness.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import base_env
from tests.hook_harness import (
    ALL_FIXTURES,
    BAD_STDIN,
    BODY_KEYS,
    SCRIPT_FOR_EVENT,
    TRANSCRIPT,
    Recorder,
    load_payload,
    run_hook,
    script_for,
    spooled,
)

# ----- the fixtures themselves -----------------------------------------------------------------


def test_fixtures_cover_every_event_and_tool() -> None:
    payloads = [load_payload(n) for n in ALL_FIXTURES]
    events = {p["hook_event_name"] for p in payloads}
    assert events == set(SCRIPT_FOR_EVENT)
    tools = {p.get("tool_name") for p in payloads if p["hook_event_name"] == "PostToolUse"}
    assert tools == {"Edit", "Read", "Bash", "Grep", "TodoWrite"}
    for payload in payloads:
        assert payload["session_id"]
        assert payload["cwd"]
        assert payload["transcript_path"]
    for line in TRANSCRIPT.read_text("utf-8").splitlines():
        entry = json.loads(line)
        assert entry["type"] in {"summary", "user", "assistant"}


# ----- the output contract, for every fixture --------------------------------------------------


@pytest.mark.parametrize("name", [n for n in ALL_FIXTURES if n != "session_start_startup"])
def test_every_fixture_exits_0_with_one_json_line_when_service_down(
    name: str, tmp_path: Path, down_env: dict[str, str]
) -> None:
    payload = load_payload(name, tmp_path)
    assert run_hook(script_for(payload), payload, down_env).output() == {}


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_fixture_exits_0_with_one_json_line_against_a_peer(
    name: str, tmp_path: Path, data_dir: Path, recorder: Recorder
) -> None:
    payload = load_payload(name, tmp_path)
    output = run_hook(script_for(payload), payload, base_env(data_dir, recorder.port)).output()
    assert output == {}  # the recorder has no context to inject
    assert spooled(data_dir) == []


@pytest.mark.parametrize("stdin", BAD_STDIN, ids=repr)
@pytest.mark.parametrize("script", sorted(set(SCRIPT_FOR_EVENT.values())))
def test_empty_or_malformed_stdin_is_a_no_op(
    script: str, stdin: bytes, data_dir: Path, recorder: Recorder
) -> None:
    assert run_hook(script, stdin, base_env(data_dir, recorder.port)).output() == {}
    assert recorder.requests == []
    assert list(data_dir.iterdir()) == []  # no spool, no spawn lock, no log


def test_missing_fields_are_tolerated(data_dir: Path, recorder: Recorder) -> None:
    env = base_env(data_dir, recorder.port)
    for script in ("user_prompt_submit", "post_tool_use", "stop", "session_end"):
        assert run_hook(script, {}, env).output() == {}
    bodies = [r.json() for r in recorder.requests]
    assert [set(b) for b in bodies] == [
        BODY_KEYS["/api/sessions/init"],
        BODY_KEYS["/api/sessions/observations"] - {"tool_use_id"},
        BODY_KEYS["/api/sessions/summarize"],
        BODY_KEYS["/api/sessions/end"],
    ]
    assert bodies[0]["project"] == "unknown"
    assert bodies[1]["tool_input"] is None
