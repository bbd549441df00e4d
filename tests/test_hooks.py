"""The hooks as Claude Code runs them: real subprocesses fed real-shaped payloads.

Three kinds of peer, all real sockets:
- nothing listening (the service is down): the hook must spool and exit 0;
- ``Recorder``, a tiny stdlib HTTP server that records requests and answers what a test tells
  it to (the protocol-level contract: which route, which body, the Idempotency-Key header, what
  each status code makes the hook do);
- the real ``python -m service`` (the ``service`` fixture): the bodies are accepted and rows
  appear, and the spool replays without duplicates.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hooks import _runtime, post_tool_use, session_end, session_start, stop, user_prompt_submit
from tests.conftest import FIXTURES, HOOKS_DIR, ROOT, Service, base_env, free_port
from workbench import spool

HOOK_FIXTURES = FIXTURES / "hooks"
TRANSCRIPT = FIXTURES / "transcript.jsonl"
SCRIPT_FOR_EVENT = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use_read",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
    "SubagentStop": "stop",
    "SessionEnd": "session_end",
}
ROUTE_FOR_SCRIPT = {
    "user_prompt_submit": user_prompt_submit.ROUTE,
    "post_tool_use": post_tool_use.ROUTE,
    "stop": stop.ROUTE,
    "session_end": session_end.ROUTE,
}
BODY_KEYS = {
    "/api/sessions/init": {"contentSessionId", "project", "prompt", "platformSource"},
    "/api/sessions/observations": {
        "contentSessionId",
        "tool_name",
        "tool_input",
        "tool_response",
        "cwd",
        "tool_use_id",
    },
    "/api/sessions/summarize": {"contentSessionId", "last_assistant_message"},
    "/api/sessions/end": {"contentSessionId", "reason"},
}
ALL_FIXTURES = sorted(p.stem for p in HOOK_FIXTURES.glob("*.json"))
# No-ops: they send and spool nothing (PreToolUse is a read-only query; see test_hooks_recall).
NO_OP_FIXTURES = {"stop_hook_active", "stop_subagent", "pre_tool_use_read"}
DELIVERING = [n for n in ALL_FIXTURES if n not in NO_OP_FIXTURES and n != "session_start_startup"]
SECRET = "sk-live-4f9a81c2e7d3PRIVATE-staging-token"
FINAL_ANSWER = (
    "Fixed: `check_token` in `src/acme/auth.py` compared `exp` against "
    "`time.time() - LEEWAY_S`, so tokens stayed valid for 30 s after expiry. It now rejects a "
    "token as soon as `exp <= time.time()`, and `test_expired_token_rejected` passes."
)
BAD_STDIN = [b"", b"  \n", b"{not json", b"[1, 2]", b'"text"', b"null", b"\xff\xfe{}"]

needs_service = pytest.mark.skipif(
    not (ROOT / "service" / "__main__.py").exists(), reason="service/ is not written yet"
)


# ----- helpers ---------------------------------------------------------------------------------


def load_payload(name: str, tmp_path: Path | None = None) -> dict[str, Any]:
    """A fixture payload; with ``tmp_path``, its transcript_path points at a real copy."""
    payload: dict[str, Any] = json.loads((HOOK_FIXTURES / f"{name}.json").read_text("utf-8"))
    if tmp_path is not None:
        copy = tmp_path / "transcript.jsonl"
        if not copy.exists():
            shutil.copyfile(TRANSCRIPT, copy)
        payload["transcript_path"] = str(copy)
    return payload


def script_for(payload: dict[str, Any]) -> str:
    return SCRIPT_FOR_EVENT[payload["hook_event_name"]]


@dataclass
class HookRun:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float

    def output(self) -> dict[str, Any] | None:
        """Assert the contract (exit 0, quiet stderr, at most one JSON line); return the JSON."""
        assert self.returncode == 0, self.stderr.decode(errors="replace")
        assert self.stderr == b"", self.stderr.decode(errors="replace")
        text = self.stdout.decode("utf-8")
        lines = text.splitlines()
        assert len(lines) <= 1, text
        if not lines:
            return None
        value = json.loads(lines[0])
        assert isinstance(value, dict), text
        return value


def run_hook(
    script: str,
    stdin: dict[str, Any] | bytes,
    env: dict[str, str],
    *,
    flags: tuple[str, ...] = (),
    script_path: Path | None = None,
    cwd: Path | None = None,
) -> HookRun:
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode("utf-8")
    path = script_path or HOOKS_DIR / f"{script}.py"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, *flags, str(path)],
        input=data,
        env=env,
        capture_output=True,
        timeout=60,
        cwd=cwd,
    )
    return HookRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def spooled(data_dir: Path) -> list[tuple[Path, spool.Envelope]]:
    return [
        (p, spool.Envelope.from_json(p.read_text("utf-8")))
        for p in spool.pending(data_dir / "spool")
    ]


def all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


# ----- a recording HTTP peer -------------------------------------------------------------------


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Recorder:
    """A real loopback HTTP/1.1 server that records requests and answers canned replies."""

    port: int = 0
    requests: list[Recorded] = field(default_factory=list)
    replies: dict[str, tuple[int, bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.replies.setdefault("/api/health", (200, b'{"service": "workbench", "status": "ok"}'))
        self.replies.setdefault("/api/context/inject", (404, b'{"detail": "Not Found"}'))
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive framing: the client must honour lengths

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                recorder.requests.append(
                    Recorded(
                        self.command,
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                )
                status, reply = recorder.replies.get(path, (200, b'{"status": "queued"}'))
                self.send_response(status)
                kind = "application/json" if reply.startswith(b"{") else "text/plain"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def to(self, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.path.split("?", 1)[0] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    yield rec
    rec.close()


@pytest.fixture
def down_env(data_dir: Path) -> dict[str, str]:
    """An environment whose port has nothing listening: the service is down."""
    return base_env(data_dir, free_port())


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


# ----- service down: the spool -----------------------------------------------------------------


@pytest.mark.parametrize("name", DELIVERING)
def test_service_down_spools_exactly_one_private_envelope(
    name: str, tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    payload = load_payload(name, tmp_path)
    script = script_for(payload)
    assert run_hook(script, payload, down_env).output() == {}

    files = spooled(data_dir)
    assert len(files) == 1
    path, envelope = files[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((data_dir / "spool").stat().st_mode) == 0o700
    assert path.name == f"{envelope.event_key}.json"
    assert envelope.hook == payload["hook_event_name"]
    assert envelope.path == ROUTE_FOR_SCRIPT[script]
    assert set(envelope.body) == BODY_KEYS[envelope.path]
    assert envelope.body["contentSessionId"] == payload["session_id"]
    assert envelope.spooled_at_ns > 0
    assert SECRET.encode() not in path.read_bytes()
    assert [p.name for p in (data_dir / "spool").iterdir()] == [path.name]  # no .tmp left


def test_private_prompt_text_is_never_spooled(data_dir: Path, down_env: dict[str, str]) -> None:
    payload = load_payload("user_prompt_submit_private")
    assert SECRET in payload["prompt"]
    run_hook("user_prompt_submit", payload, down_env).output()
    fully_private = {**payload, "prompt": f"<private>{SECRET}</private>"}
    run_hook("user_prompt_submit", fully_private, down_env).output()
    bash = load_payload("post_tool_use_bash_pytest_fail")
    bash["tool_input"]["command"] = f"deploy --token <private>{SECRET}</private>"
    run_hook("post_tool_use", bash, down_env).output()

    (_, partial), (_, empty), (_, tool) = spooled(data_dir)
    assert partial.body["prompt"] == (
        "Check the staging deploy with this key  and tell me whether /healthz answers."
    )
    # An all-private prompt is still announced, empty, so the service can number and mark it.
    assert empty.body["prompt"] == ""
    assert empty.path == "/api/sessions/init"
    assert tool.body["tool_input"]["command"] == "deploy --token"
    assert SECRET.encode() not in all_bytes(data_dir)
    assert b"PRIVATE" not in all_bytes(data_dir)


def test_task_notification_prompt_sends_nothing(
    data_dir: Path, recorder: Recorder, down_env: dict[str, str]
) -> None:
    payload = {
        **load_payload("user_prompt_submit"),
        "prompt": "<task-notification>\n<task-id>b7f1</task-id>\n<status>completed</status>\n"
        "</task-notification>",
    }
    assert run_hook("user_prompt_submit", payload, down_env).output() == {}
    assert run_hook("user_prompt_submit", payload, base_env(data_dir, recorder.port)).output() == {}
    assert spooled(data_dir) == []
    assert recorder.requests == []


def test_spool_order_is_capture_order(
    tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    order = [
        "user_prompt_submit",
        "post_tool_use_grep",
        "post_tool_use_read",
        "post_tool_use_edit",
        "post_tool_use_bash_pytest_fail",
        "stop",
        "session_end",
    ]
    for name in order:
        payload = load_payload(name, tmp_path)
        run_hook(script_for(payload), payload, down_env).output()
    envelopes = [e for _, e in spooled(data_dir)]
    captured = [(e.hook, e.body.get("tool_name")) for e in envelopes]
    expected = [
        (load_payload(n)["hook_event_name"], load_payload(n).get("tool_name")) for n in order
    ]
    assert captured == expected
    assert [e.event_key for e in envelopes] == sorted(e.event_key for e in envelopes)
    assert len({e.event_key for e in envelopes}) == len(order)


@pytest.mark.parametrize("flags", [("-S",), ("-I",), ("-S", "-E")], ids=" ".join)
def test_runs_without_site_packages_from_any_cwd(
    flags: tuple[str, ...], tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    payload = load_payload("post_tool_use_edit")
    run = run_hook("post_tool_use", payload, down_env, flags=flags, cwd=tmp_path)
    assert run.output() == {}
    assert len(spooled(data_dir)) == 1


def test_runs_from_an_installed_layout_with_only_the_stdlib_modules(
    tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    """hooks/ and the three stdlib-only workbench modules side by side, nothing else."""
    site = tmp_path / "site-packages"
    shutil.copytree(HOOKS_DIR, site / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "workbench").mkdir()
    for name in ("__init__.py", "locate.py", "spool.py", "redact.py"):
        shutil.copyfile(ROOT / "workbench" / name, site / "workbench" / name)
    for name in ("user_prompt_submit_private", "post_tool_use_edit", "session_end"):
        payload = load_payload(name)
        run = run_hook(
            script_for(payload),
            payload,
            down_env,
            flags=("-I", "-S"),
            script_path=site / "hooks" / f"{script_for(payload)}.py",
            cwd=tmp_path,
        )
        assert run.output() == {}
    assert len(spooled(data_dir)) == 3


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


@pytest.mark.parametrize("status", [500, 502, 503, 408, 429])
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
    assert _runtime.TOTAL_TIMEOUT_S <= run.seconds < _runtime.TOTAL_TIMEOUT_S + 8
    assert len(spooled(data_dir)) == 1


def test_stop_posts_the_last_assistant_message(
    tmp_path: Path, data_dir: Path, recorder: Recorder
) -> None:
    payload = load_payload("stop", tmp_path)
    assert run_hook("stop", payload, base_env(data_dir, recorder.port)).output() == {}
    (request,) = recorder.to(stop.ROUTE)
    assert request.json() == {
        "contentSessionId": payload["session_id"],
        "last_assistant_message": FINAL_ANSWER,
    }


@pytest.mark.parametrize(
    "payload_of",
    [
        lambda p: load_payload("stop_hook_active", p),
        lambda p: load_payload("stop_subagent", p),
        lambda p: {**load_payload("stop", p), "agent_id": "a1b2c3"},
        lambda p: {**load_payload("stop", p), "stop_hook_active": True},
    ],
    ids=["stop_hook_active", "subagent_stop", "stop_with_agent_id", "stop_active_flag"],
)
def test_stop_no_ops_send_and_spool_nothing(
    payload_of: Any, tmp_path: Path, data_dir: Path, recorder: Recorder, down_env: dict[str, str]
) -> None:
    payload = payload_of(tmp_path)
    assert run_hook("stop", payload, base_env(data_dir, recorder.port)).output() == {}
    assert run_hook("stop", payload, down_env).output() == {}
    assert recorder.requests == []
    assert spooled(data_dir) == []


def test_post_tool_use_optional_keys_only_when_present() -> None:
    payload = load_payload("post_tool_use_grep")
    bare = post_tool_use.build_body(_runtime.HookInput({**payload, "tool_use_id": None}))
    assert set(bare) == BODY_KEYS[post_tool_use.ROUTE] - {"tool_use_id"}
    sub = {**payload, "agent_id": "a7c41e9b", "agent_type": "Explore"}
    body = post_tool_use.build_body(_runtime.HookInput(sub))
    assert body["agentId"] == "a7c41e9b"
    assert body["agentType"] == "Explore"
    assert body["tool_use_id"] == payload["tool_use_id"]


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
        ("GET", f"/api/context/inject?projects=acme-api&contentSessionId={session}"),
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


def test_session_start_waits_when_another_hook_holds_the_spawn_lock(
    tmp_path: Path, data_dir: Path
) -> None:
    port = free_port()
    stdin_file = tmp_path / "payload.json"
    stdin_file.write_text(json.dumps(load_payload("session_start_startup")), encoding="utf-8")
    fd = os.open(data_dir / "spawn.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # "another session is spawning"
    try:
        with stdin_file.open("rb") as stdin:
            proc = subprocess.Popen(
                [sys.executable, str(HOOKS_DIR / "session_start.py")],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=base_env(data_dir, port),
            )
        _wait_until_it_opens(proc.pid, data_dir / "spawn.lock")  # it is now waiting on us
        peer = Recorder(port=port)  # the other spawner's service comes up
        peer.replies["/api/context/inject"] = (200, b"remembered")
        try:
            out, err = proc.communicate(timeout=30)
        finally:
            peer.close()
    finally:
        os.close(fd)
    run = HookRun(proc.returncode, out, err, 0.0)
    assert run.output() == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "remembered"}
    }
    assert not (data_dir / "logs").exists()  # it never spawned a second service


def _wait_until_it_opens(pid: int, path: Path, timeout: float = 20.0) -> None:
    """Wait until process ``pid`` has ``path`` open (Linux /proc; elsewhere, a short sleep)."""
    fd_dir = Path(f"/proc/{pid}/fd")
    if not fd_dir.is_dir():
        time.sleep(1.0)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(os.readlink(fd_dir / fd) == str(path) for fd in os.listdir(fd_dir)):
                return
        except OSError:  # an fd closed while we looked
            pass
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} never opened {path}")


@needs_service
def test_session_start_spawns_the_service_when_down(data_dir: Path, make_service: Any) -> None:
    svc: Service = make_service(start=False)
    run = run_hook("session_start", load_payload("session_start_startup"), svc.env)
    pid = None
    try:
        output = run.output()
        assert output == {} or output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        assert run.seconds < session_start.SPAWN_BUDGET_S + 10
        health = _wait_for_health(svc, timeout=30)
        assert health["service"] == "workbench"
        pid = int((data_dir / "service.pid").read_text("utf-8").strip())
        assert pid == health["pid"]
        assert (data_dir / "logs" / "service.log").exists()
    finally:
        _stop_detached(svc, data_dir, pid)


def _wait_for_health(svc: Service, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status, body = svc.get("/api/health", timeout=1.0)
            if status == 200 and isinstance(body, dict):
                return body
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"the spawned service never answered on {svc.url}")


def _stop_detached(svc: Service, data_dir: Path, pid: int | None) -> None:
    """Stop a service that is not our child: SIGTERM, wait for the port to close, SIGKILL."""
    if pid is None:
        try:
            pid = int((data_dir / "service.pid").read_text("utf-8").strip())
        except (OSError, ValueError):
            return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                svc.get("/api/health", timeout=0.5)
            except OSError:
                return
            time.sleep(0.1)


# ----- the transcript reader -------------------------------------------------------------------


def _assistant(text_blocks: list[Any], message_id: str = "msg_1") -> str:
    return json.dumps(
        {
            "type": "assistant",
            "message": {"id": message_id, "role": "assistant", "content": text_blocks},
        }
    )


def _write(path: Path, *lines: str) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_last_assistant_message_from_the_fixture_transcript() -> None:
    assert stop.last_assistant_message(str(TRANSCRIPT)) == FINAL_ANSWER
    for chunk in (1, 7, 100, 4096):
        assert stop.last_assistant_message(str(TRANSCRIPT), chunk_bytes=chunk) == FINAL_ANSWER


def test_a_transcript_path_with_a_nul_byte_is_no_transcript() -> None:
    """``open`` raises ValueError (not OSError) for it: the summary goes on without the answer
    (found by the fuzz suite: the Stop hook printed nothing)."""
    assert stop.last_assistant_message("\x00") == ""
    assert stop.last_assistant_message("/tmp/a\x00b.jsonl") == ""


def test_last_assistant_message_shapes(tmp_path: Path) -> None:
    user = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}})
    tool = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    text = {"type": "text", "text": "first"}
    cases = {
        "plain string content": (
            [
                user,
                json.dumps(
                    {"type": "assistant", "message": {"role": "assistant", "content": "plain"}}
                ),
            ],
            "plain",
        ),
        "text blocks joined": (
            [_assistant([text, tool, {"type": "text", "text": "second"}])],
            "first\nsecond",
        ),
        "same message split over lines": (
            [user, _assistant([text], "m2"), _assistant([tool], "m2")],
            "first",
        ),
        "an earlier message is not joined": (
            [_assistant([{"type": "text", "text": "old"}], "m1"), user, _assistant([text], "m2")],
            "first",
        ),
        "no text in the last message": ([_assistant([text], "m1"), _assistant([tool], "m2")], ""),
        "half-written last line skipped": (
            [_assistant([text]), '{"type": "assistant", "mes'],
            "first",
        ),
        "no assistant at all": ([user, user], ""),
        "garbage lines": (["not json", "[]", '{"type": 3}', _assistant([text]), "{{"], "first"),
    }
    for name, (lines, expected) in cases.items():
        path = _write(tmp_path / f"{abs(hash(name))}.jsonl", *lines)
        assert stop.last_assistant_message(path) == expected, name
        assert stop.last_assistant_message(path, chunk_bytes=3) == expected, name
    assert stop.last_assistant_message("") == ""
    assert stop.last_assistant_message(str(tmp_path / "missing.jsonl")) == ""
    assert stop.last_assistant_message(str(tmp_path)) == ""  # a directory


def test_last_assistant_message_is_redacted_before_sending(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "t.jsonl",
        _assistant([{"type": "text", "text": f"done <private>{SECRET}</private> ok"}]),
    )
    payload = {**load_payload("stop"), "transcript_path": path}
    body = stop.build_body(_runtime.HookInput(payload))
    assert body == {"contentSessionId": payload["session_id"], "last_assistant_message": "done  ok"}


def test_only_the_tail_of_a_large_transcript_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = json.dumps(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 2000}
                ],
            },
        }
    )
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for _ in range(5000):
            fh.write(filler + "\n")
        fh.write(_assistant([{"type": "text", "text": "the end"}]) + "\n")
    assert path.stat().st_size > 10_000_000
    read: list[int] = []

    class Counting:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

        def seek(self, *args: int) -> int:
            return int(self.inner.seek(*args))

        def read(self, size: int) -> bytes:
            data: bytes = self.inner.read(size)
            read.append(len(data))
            return data

    monkeypatch.setattr(stop, "open", lambda p, mode: Counting(open(p, mode)), raising=False)  # noqa: PLW1514
    assert stop.last_assistant_message(str(path)) == "the end"
    assert 0 < sum(read) <= 2 * stop.CHUNK_BYTES


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    chunk=st.integers(min_value=1, max_value=64),
    trailing_newline=st.booleans(),
)
def test_iter_lines_reversed_matches_a_naive_split(
    lines: list[bytes], chunk: int, trailing_newline: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing_newline else b"")
    with tempfile.NamedTemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        got = list(stop.iter_lines_reversed(fh.name, chunk_bytes=chunk))
    assert got == [line for line in reversed(data.split(b"\n")) if line.strip()]


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
