"""``workbench mcp`` answers the handshake at once and loads the SDK on the first real call.

Importing the MCP SDK (pydantic models of every protocol era), the tools and the settings
took 1.5 s on an idle machine and 3.5-7 s on a loaded one, so Claude Code's version probe
timed out on every session and the first model request could go out before the tools
existed (issue 20, item 2). This module imports only the standard library and answers what
a client asks before using a tool, from ``handshake.json`` (a snapshot of the SDK server's
own replies, kept current by a test):

- ``initialize``: the SDK's result, with the protocol version negotiated as the SDK does
  (the client's if it is a handshake version, else the latest one);
- ``tools/list``: the SDK's tool list, with this session's project in ``save_memory``;
- ``prompts/list``, ``resources/list``, ``resources/templates/list``: the SDK's (empty) lists;
- ``ping``: ``{}``;
- ``server/discover`` (the 2026-07-28 era's probe, which Claude Code 2.1 sends before
  ``initialize``): "method not found", so the client falls back to ``initialize`` at once.

Any other line (a tool call, a malformed line, any method it does not know) starts the real
server (``server.build_server``) in a thread: it is handed the client's ``initialize`` and
``notifications/initialized`` again (its reply to that replay is dropped), then every line
held so far and every line after, in order. From then on the SDK answers everything,
``line_check`` included. The service is only reached by a tool call (``backend``), never at
start.

``--platform <agent>`` (what ``workbench install --agent`` registers) names the agent that
launched the server: ``save_memory`` stores its memories as that agent's (issue 20 item 14);
without it (a registration from before), as Claude Code's.

stdin EOF ends the server; SIGINT ends it at once with status 0, skipping the interpreter's
teardown (Claude Code sends SIGINT, then SIGTERM if the process is still there 100 ms later).
While serving, fd 0 reads the null device and fd 1 writes to stderr, as in ``wire``.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from pathlib import Path

TYPE_CHECKING = False  # typing costs start-up: this module is the fast path
if TYPE_CHECKING:
    from typing import Any

    from workbench.locate import ProjectIdentity

SNAPSHOT = Path(__file__).with_name("handshake.json")
PROJECT_MARK = "@@workbench-project@@"  # where the project goes in the snapshot's tool list
REPLAY_ID = "workbench-front-replayed-initialize"
# What agents list at start (Gemini CLI and Codex ask for prompts and resources too).
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
# The 2026-07-28 era's first request (Claude Code 2.1 sends it before ``initialize``).
DISCOVER = "server/discover"


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _request(raw: bytes) -> dict[str, Any] | None:
    """``raw`` as a plain JSON-RPC object, or ``None``: anything odd is the SDK's to judge."""
    try:
        message = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if "\\ud" in raw.decode("utf-8").lower():  # a lone surrogate is line_check's to answer
        return None
    request_id = message.get("id")
    if "id" in message and (isinstance(request_id, bool) or not isinstance(request_id, int | str)):
        return None
    return message


def current_project() -> str:
    """The project of this session: Claude Code's project dir, else the server's cwd.

    Here, stdlib only, so ``front`` fills it into the tool list without the SDK;
    ``recall_tools`` uses the same function.
    """
    return current_identity().name


def current_identity() -> ProjectIdentity:
    """Name and key of this session's project (``workbench.locate.project_identity``)."""
    from workbench.locate import project_identity

    return project_identity(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())


class Front:
    """The server until the SDK takes over; then a pipe of lines to it."""

    def __init__(
        self, wire_out: int, data_dir: str | None, start: bool, platform: str | None = None
    ) -> None:
        self._out = os.fdopen(wire_out, "wb", closefd=False)
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._data_dir, self._start = data_dir, start
        self._platform = platform  # the platform_source of the agent that launched us
        self._snapshot: dict[str, Any] | None = None
        self._unusable = False  # the snapshot failed once: the SDK answers everything
        self._initialize: bytes | None = None
        self._initialized: bytes | None = None
        self._held: list[bytes] = []
        self._lines: queue.Queue[bytes | None] | None = None  # set: the SDK has taken over
        self._sdk: threading.Thread | None = None

    # ----- the wire --------------------------------------------------------------------------

    def write(self, line: bytes) -> None:
        """One whole line on the wire (the SDK's replies come through here too)."""
        with self._write_lock:
            self._out.write(line)
            self._out.flush()

    def _answer(self, request_id: Any, result: Any) -> None:
        self._reply({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _error(self, request_id: Any, code: int, message: str) -> None:
        self._reply(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )

    def _reply(self, reply: dict[str, Any]) -> None:
        text = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
        self.write(text.encode("utf-8") + b"\n")

    # ----- reading ---------------------------------------------------------------------------

    def feed(self, raw: bytes) -> None:
        """One line from the client: answered here, or held for (or passed to) the SDK."""
        with self._lock:
            if self._lines is not None:
                self._lines.put(raw)
                return
            try:
                answered = self._answered_here(raw)
            except (LookupError, TypeError, ValueError, AttributeError) as exc:
                # A snapshot of another shape (an older handshake.json): the SDK answers.
                sys.stderr.write(f"workbench mcp: handshake.json unusable ({exc!r})\n")
                self._unusable, answered = True, False
            if answered:
                return
            self._held.append(raw)
            self._take_over()

    def close(self) -> None:
        """stdin ended: let the SDK finish what it holds, then stop."""
        with self._lock:
            lines, sdk = self._lines, self._sdk
        if lines is not None:
            lines.put(None)
        if sdk is not None:
            sdk.join()

    def _answered_here(self, raw: bytes) -> bool:
        if not raw.strip():
            return True
        message = _request(raw)
        if message is None:
            return False
        method, request_id = message.get("method"), message.get("id")
        if method == "notifications/initialized" and "id" not in message:
            self._initialized = raw
            return True
        if "id" not in message:
            return False
        if method == "ping":
            self._answer(request_id, {})
            return True
        snapshot = self._snapshot_or_none()
        if snapshot is None:
            return False
        if method == DISCOVER:
            # Trigger: Claude Code 2.1 probes for the 2026-07-28 protocol era first. / Why:
            # handed to the SDK, the probe waited for it to load, past the probe's timeout.
            # Outcome: "method not found" at once; the client falls back to ``initialize``.
            self._error(request_id, -32601, f"Method not found: {DISCOVER}")
            return True
        if method == "initialize" and self._initialize is None:
            params = message.get("params")
            if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
                return False
            if not isinstance(params.get("clientInfo"), dict):
                return False
            asked = params["protocolVersion"]
            versions = snapshot["handshake_versions"]
            chosen = asked if asked in versions else versions[-1]
            self._answer(request_id, {**snapshot["initialize"], "protocolVersion": chosen})
            self._initialize = raw
            return True
        listed = snapshot["lists"].get(method) if isinstance(method, str) else None
        if listed is not None and self._initialize is not None and not message.get("params"):
            text = json.dumps(listed)
            if PROJECT_MARK in text:
                text = text.replace(PROJECT_MARK, _json_inner(current_project()))
            self._answer(request_id, json.loads(text))
            return True
        return False

    def _snapshot_or_none(self) -> dict[str, Any] | None:
        if self._unusable:
            return None
        if self._snapshot is None:
            try:
                self._snapshot = json.loads(SNAPSHOT.read_text("utf-8"))
            except (OSError, ValueError):
                return None  # no snapshot: the SDK answers everything
        return self._snapshot

    # ----- handing over to the SDK -------------------------------------------------------------

    def _take_over(self) -> None:
        """Start the SDK server with the handshake replayed and the held lines queued."""
        lines: queue.Queue[bytes | None] = queue.Queue()
        if self._initialize is not None:
            replay = json.loads(self._initialize)
            replay["id"] = REPLAY_ID
            lines.put(json.dumps(replay).encode("utf-8"))
            lines.put(
                self._initialized or b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
            )
        for raw in self._held:
            lines.put(raw)
        self._held = []
        self._lines = lines
        self._sdk = threading.Thread(target=self._run_sdk, args=(lines,), daemon=True)
        self._sdk.start()

    def _run_sdk(self, lines: queue.Queue[bytes | None]) -> None:
        from workbench.mcp_server.server import run_on_lines

        def write(line: bytes) -> None:
            if REPLAY_ID.encode() in line[:200] and _reply_id(line) == REPLAY_ID:
                return  # the SDK's answer to the replayed handshake: the client has its own
            self.write(line)

        try:
            run_on_lines(self._data_dir, self._start, lines, write, self._platform)
        except BaseException as exc:  # noqa: BLE001 - a server that cannot serve must end
            # Trigger: the SDK, the settings or a tool module failed to load or run.
            # Why: this thread is the only reader of the queue; the client would wait forever.
            # Outcome: the reason on stderr (the agent's MCP log), and the process exits 1.
            sys.stderr.write(f"workbench mcp: the server stopped: {exc!r}\n")
            sys.stderr.flush()
            os._exit(1)


def _json_inner(text: str) -> str:
    """``text`` as it sits inside a JSON string."""
    return json.dumps(text)[1:-1]


def _reply_id(line: bytes) -> Any:
    try:
        return json.loads(line).get("id")
    except ValueError:
        return None


def serve(data_dir: str | None = None, start: bool = True, platform: str | None = None) -> None:
    """Serve over stdio until stdin ends; exit 0 at once on SIGINT. ``platform``: the
    ``platform_source`` of the agent that launched the server (what ``save_memory`` stores)."""
    from workbench.mcp_server.stdio_fds import claim

    wire_in, restore_in = claim(0, os.open(os.devnull, os.O_RDONLY))
    wire_out, restore_out = claim(1, os.dup(2))
    front = Front(wire_out, data_dir, start, platform)
    interrupted = False
    try:
        with os.fdopen(wire_in, "rb", closefd=False) as stdin:
            for raw in stdin:
                front.feed(raw)
        front.close()
    except KeyboardInterrupt:
        interrupted = True  # the client asked us to stop; a traceback would only alarm its log
    finally:
        restore_out()
        restore_in()
    if interrupted:
        # Trigger: SIGINT. / Why: Claude Code sends SIGTERM if we are still there 100 ms
        # later, and with the SDK loaded the interpreter's teardown alone takes ~0.4 s.
        # Outcome: leave now; nothing here needs tearing down (every reply is already
        # flushed, and the service, not this process, holds the store).
        sys.stderr.flush()
        os._exit(0)


def main(argv: list[str]) -> bool:
    """Serve ``workbench mcp`` with ``argv`` (its options); ``False`` if they need the CLI."""
    data_dir: str | None = None
    start = True
    platform: str | None = None
    args = iter(argv)
    for arg in args:
        if arg == "--no-start":
            start = False
        elif arg == "--start":
            start = True
        elif arg in ("--data-dir", "--platform"):
            value = next(args, None)
            if value is None:
                return False
            if arg == "--data-dir":
                data_dir = value
            elif (platform := _platform(value)) is None:
                return False
        elif arg.startswith("--data-dir="):
            data_dir = arg.partition("=")[2]
        elif arg.startswith("--platform="):
            if (platform := _platform(arg.partition("=")[2])) is None:
                return False
        else:
            return False  # --help, a typo, an agent we do not know: the CLI explains
    serve(data_dir, start, platform)
    return True


def _platform(name: str) -> str | None:
    from workbench.platforms import source_of_agent

    return source_of_agent(name)


if __name__ == "__main__":  # pragma: no cover - ``python -m workbench mcp`` is the entry
    sys.exit(0 if main(sys.argv[1:]) else 2)
