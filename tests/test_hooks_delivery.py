"""Delivery against a recording peer (``hooks/_runtime.py``): what each status code makes a hook
do, the Idempotency-Key header, the PostToolUse body, and the raw-socket client's framing.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from hooks import _runtime, post_tool_use, session_end, user_prompt_submit
from tests.conftest import base_env
from tests.hook_harness import (
    BODY_KEYS,
    Recorder,
    load_payload,
    run_hook,
    spooled,
)
from workbench import spool
from workbench.agents import claude_settings

# ----- against a recording peer: routes, headers, status codes ---------------------------------


@pytest.mark.parametrize("status", [200, 201, 202, 204])
def test_any_2xx_is_delivered_with_an_idempotency_key(
    status: int, data_dir: Path, recorder: Recorder
) -> None:
    recorder.replies[post_tool_use.ROUTE] = (status, b"" if status == 204 else b'{"ok": 1}')
    payload = load_payload("post_tool_use_edit")
    assert run_hook("post_tool_use", payload, base_env(data_dir, recorder.port)).output() == {}
    (request,) = recorder.requests
    assert (request.method, request.path) == ("POST", post_tool_use.ROUTE)
    assert request.headers["content-type"] == "application/json"
    key = request.headers["idempotency-key"]
    assert len(key) == 33
    assert key[20] == "-"
    assert key[:20].isdigit()
    assert request.json() == post_tool_use.build_body(_runtime.HookInput(payload))
    assert spooled(data_dir) == []


@pytest.mark.parametrize("status", [400, 404, 413, 422])
def test_4xx_means_invalid_and_is_parked_in_rejected_not_spooled(
    status: int, data_dir: Path, recorder: Recorder
) -> None:
    recorder.replies[session_end.ROUTE] = (status, b'{"detail": "invalid"}')
    payload = load_payload("session_end")
    assert run_hook("session_end", payload, base_env(data_dir, recorder.port)).output() == {}
    (request,) = recorder.requests
    assert spooled(data_dir) == []  # never replayed...
    (parked,) = (data_dir / "spool" / "rejected").iterdir()  # ...but never silently gone
    envelope = spool.Envelope.from_json(parked.read_text("utf-8"))
    assert envelope.event_key == request.headers["idempotency-key"]
    assert envelope.body == request.json()
    assert envelope.reason == f'HTTP {status}: {{"detail": "invalid"}}'
    assert spool.backlog(data_dir / "spool")["rejected"] == 1


@pytest.mark.parametrize("status", [500, 502, 503, 408, 421, 429])
def test_5xx_and_try_later_statuses_spool_under_the_same_key(
    status: int, data_dir: Path, recorder: Recorder
) -> None:
    recorder.replies[user_prompt_submit.ROUTE] = (status, b'{"detail": "busy"}')
    payload = load_payload("user_prompt_submit")
    assert run_hook("user_prompt_submit", payload, base_env(data_dir, recorder.port)).output() == {}
    (request,) = recorder.requests
    ((_, envelope),) = spooled(data_dir)
    assert envelope.event_key == request.headers["idempotency-key"]
    assert envelope.body == request.json()


def test_a_stalled_service_times_out_and_spools(data_dir: Path) -> None:
    with socket.socket() as listener:  # accepts the connection (backlog), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        env = base_env(data_dir, listener.getsockname()[1])
        run = run_hook("post_tool_use", load_payload("post_tool_use_read"), env)
    assert run.output() == {}
    # It waited for the answer until its timeout (a lower bound: load only lengthens it), then
    # gave up: had it hung, run_hook's own limit would have failed the test. How long past the
    # timeout it took is in bench/worst_cases.py (issue 23: no upper time limits in tests).
    assert run.seconds >= _runtime.TOTAL_TIMEOUT_S
    assert len(spooled(data_dir)) == 1


def silent_listener() -> socket.socket:
    """A loopback socket that accepts connections (backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener


def nested_private(depth: int) -> str:
    """Issue 19's adversarial text: each removed block re-forms the tag around it."""
    return "<priv" * depth + "<private>SECRET</private>" + "ate>SECRET</private>" * depth


def test_an_adversarial_payload_is_spooled_before_the_shortest_agent_timeout(
    data_dir: Path,
) -> None:
    """Issue 19, item 4: a ~100 KB tool output of nested re-forming tags took the old
    (quadratic) redaction longer than any agent waits, so the hook was killed with its event
    neither delivered nor spooled. Run with the shortest timeout an agent gives our hooks,
    against a service that never answers: the hook exits 0 and the event is spooled, redacted."""
    shortest = min(timeout for _, _, timeout in claude_settings.HOOK_SCRIPTS.values())
    payload = load_payload("post_tool_use_bash_pytest_fail")
    payload["tool_response"] = {"stdout": "kept " + nested_private(5000)}
    with silent_listener() as listener:
        env = base_env(data_dir, listener.getsockname()[1])
        run = run_hook("post_tool_use", payload, env, timeout=shortest)
    assert run.output() == {}
    ((path, envelope),) = spooled(data_dir)
    assert envelope.body["tool_response"] == {"stdout": "kept"}
    assert b"SECRET" not in path.read_bytes()


def test_past_its_deadline_a_hook_spools_without_trying_the_service(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The internal deadline: with no time left, ``deliver`` spools at once (the silent
    service never even sees a connection), so no agent timeout can kill a hook mid-request."""
    monkeypatch.setattr(_runtime, "STARTED", time.monotonic() - _runtime.DELIVERY_DEADLINE_S)
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data_dir))
    with silent_listener() as listener:
        listener.setblocking(False)
        monkeypatch.setenv("WORKBENCH_PORT", str(listener.getsockname()[1]))
        body = {"contentSessionId": "s", "reason": "other"}
        assert _runtime.deliver("SessionEnd", session_end.ROUTE, body, data_dir) == "spooled"
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    ((_, envelope),) = spooled(data_dir)
    assert envelope.body == body


def test_post_tool_use_optional_keys_only_when_present() -> None:
    payload = load_payload("post_tool_use_grep")
    bare = post_tool_use.build_body(_runtime.HookInput({**payload, "tool_use_id": None}))
    assert set(bare) == BODY_KEYS[post_tool_use.ROUTE] - {"tool_use_id"}
    sub = {**payload, "agent_id": "a7c41e9b", "agent_type": "Explore"}
    body = post_tool_use.build_body(_runtime.HookInput(sub))
    assert body["agentId"] == "a7c41e9b"
    assert body["agentType"] == "Explore"
    assert body["tool_use_id"] == payload["tool_use_id"]


# ----- the raw-socket HTTP client --------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "status", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, b"hello"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhello", 200, b"he"),
        (
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\n\r\n",
            201,
            b"abcdefg",
        ),
        (b"HTTP/1.0 503 Service Unavailable\r\nServer: x\r\n\r\nuntil close", 503, b"until close"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", 204, b""),
    ],
)
def test_read_response_framing(raw: bytes, status: int, body: bytes) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(raw)
        theirs.shutdown(socket.SHUT_WR)
        reply = _runtime.read_response(ours, time.monotonic() + 2)
    assert (reply.status, reply.body) == (status, body)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"", "before a complete HTTP response head"),
        (b"garbage\r\n\r\n", "not an HTTP status line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", "before the whole HTTP body"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nabc", "truncated chunked"),
    ],
)
def test_read_response_rejects_broken_replies(raw: bytes, error: str) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(raw)
        theirs.shutdown(socket.SHUT_WR)
        with pytest.raises(ValueError, match=error):
            _runtime.read_response(ours, time.monotonic() + 2)


def test_a_reply_from_another_data_dirs_service_spools_and_says_which_data_dir_it_was_for(
    data_dir: Path, recorder: Recorder
) -> None:
    """The reply names another data dir (issue 19, item 2): as if nothing answered."""
    (data_dir / "instance_id").write_text("a" * 32 + "\n", encoding="ascii")
    recorder.instance = "b" * 32
    payload = load_payload("user_prompt_submit")
    assert run_hook("user_prompt_submit", payload, base_env(data_dir, recorder.port)).output() == {}
    (request,) = recorder.requests
    assert request.headers["x-workbench-instance"] == "a" * 32
    ((_, envelope),) = spooled(data_dir)
    assert envelope.event_key == request.headers["idempotency-key"]
