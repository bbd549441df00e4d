"""What the hook tests share: the real-shaped payloads, a hook run as Claude Code runs it
(a real subprocess), the spool as a hook left it, and ``Recorder``, a real loopback HTTP peer.

Three kinds of peer, all real sockets:
- nothing listening (the service is down): the hook must spool and exit 0 (``down_env``);
- ``Recorder``, a tiny stdlib HTTP server that records requests and answers what a test tells
  it to (the protocol-level contract: which route, which body, the Idempotency-Key header, what
  each status code makes the hook do; the ``recorder`` fixture);
- the real ``python -m service`` (the ``service`` fixture of tests/conftest.py).

The fixtures here (``recorder``, ``down_env``) are registered for every test file through
``pytest_plugins`` in tests/conftest.py. The hook tests themselves live in tests/test_hooks*.py,
one file per script or part of ``hooks/_runtime.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bench.harness import stop_detached
from hooks import post_tool_use, session_end, stop, user_prompt_submit
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
    "/api/sessions/init": {"contentSessionId", "project", "projectKey", "prompt", "platformSource"},
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
    timeout: float = 60,
) -> HookRun:
    """``script`` as an agent runs it; ``timeout``: the agent's, after which it kills the hook
    (``subprocess.TimeoutExpired`` here)."""
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode("utf-8")
    path = script_path or HOOKS_DIR / f"{script}.py"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, *flags, str(path)],
        input=data,
        env=env,
        capture_output=True,
        timeout=timeout,
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
    """A real loopback HTTP/1.1 server that records requests and answers canned replies.

    It plays the hook's own data dir's service: each reply carries the
    ``X-Workbench-Instance`` id the request sent (``workbench/instance.py``), unless
    ``instance`` names another one (a service of another data dir).
    """

    port: int = 0
    requests: list[Recorded] = field(default_factory=list)
    replies: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    instance: str | None = None

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
                whose = recorder.instance or self.headers.get("X-Workbench-Instance")
                if whose is not None:
                    self.send_header("X-Workbench-Instance", whose)
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


# ----- a service the SessionStart hook spawned (not our child) ----------------------------------


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


def _stop_detached(svc: Service, data_dir: Path) -> None:
    """Stop a service that is not our child (a hook spawned it), the one way the benches do:
    the PID file's pid, or the spawn lock's while it is still starting, then wait for the port."""
    stop_detached(data_dir, svc.port)
