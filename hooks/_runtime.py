"""The shared runtime of the hook scripts: read stdin, talk to the service, spool, print.

The fail-open contract. A memory hook must never disrupt an agent session, so every script:

- reads one JSON object from stdin, and treats empty or malformed input as a no-op;
- prints exactly one JSON object, on one line (anything else lands in the agent's context);
- exits 0 whatever happens (exit 2 would block the agent and show stderr to the model).

The last two rules are enforced at exactly one place per script, the documented fail-open
boundary under ``if __name__ == "__main__":``, which calls ``emit_fallback`` (``{}`` when the
script failed before printing). Everything here is fail-fast: expected conditions (the
service is down, a field is missing) are handled, anything else raises to that boundary.

Start-up cost is the budget, because PostToolUse runs on every tool call. Hence the standard
library only, plus the stdlib-only ``workbench.locate``/``spool``/``redact``; and HTTP is
spoken over a raw socket, because importing ``http.client`` alone costs more than the rest of
a hook (ENVIRONMENT.md, "Hooks: start-up cost"). The client is deliberately tiny: one request
per connection (``Connection: close``), to 127.0.0.1 only, reading ``Content-Length``,
chunked or until-close bodies.

Delivery (``deliver``): every event gets an idempotency key at capture, sent as the
``Idempotency-Key`` header and written into the spool envelope, so a replay of an event the
service did receive is a no-op. Any 2xx is success. A 4xx means the service judged the event
invalid; spooling it would only have it rejected forever, so it is parked in
``<data_dir>/spool/rejected/`` with the service's answer (counted by ``/api/health`` and
``workbench status``: nothing is silently gone). Connection refused, a timeout, a malformed
reply, a 5xx, or the two "try later" 4xx (408, 429) mean "not now": the event is spooled under
``<data_dir>/spool`` and the service replays it when it next starts. So does running out of
time: a hook has ``DELIVERY_DEADLINE_S`` from its start to deliver, well inside any agent's
timeout, and spools rather than be killed with its event. A spool write that fails
(disk full) loses that one event but never the hook's one line of output.

Whose service (``request``): the data dir's id (``workbench/instance.py``) goes out as the
``X-Workbench-Instance`` header, so a service of another data dir refuses the write (421),
and the reply's header must carry the same id. A reply from another data dir's service (the
two share a port) raises ``WrongInstance``, an ``OSError``: every caller already treats that
as "the service is down" (spool, no context), so nothing is posted into, or read from,
another data dir's memory. The check costs one small file read and one header.

Text at the boundary (``parse_input``): the whole payload is redacted once, every string and
every dict key (``workbench.redact``), and a lone UTF-16 surrogate becomes U+FFFD, so what is
posted or spooled is always valid UTF-8 and never holds a ``<private>`` block.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path

from workbench import instance, locate, redact, spool

# ``typing`` and ``dataclasses`` (which pulls in ``inspect``) are kept out of the hooks' own
# code: measured with bench/hooks.py-style runs they add ~3 ms and ~12 ms of start-up, on a
# path that runs at every tool call. Annotations stay strings (PEP 563), the two value classes
# below are plain slotted classes, and type checkers treat this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

HOST = "127.0.0.1"
CONNECT_TIMEOUT_S = 0.3
TOTAL_TIMEOUT_S = 2.0
PLATFORM_SOURCE = "claude-code"  # Claude Code's; every adapter has its own (hooks/adapters/)
DEFAULT_PLATFORM = "claude"
# 4xx statuses that say "try later", not "this event is invalid": spooled, not rejected.
# 421: the service of another data dir refused it (workbench/instance.py); ours will take it.
RETRYABLE_4XX = frozenset({408, 421, 429})
# The hook's own deadline for delivering, counted from its start (``STARTED``): half the
# shortest timeout any agent gives our hooks (10 s: Claude Code, Codex, Gemini CLI and the
# OpenCode plugin; ``workbench.agents.claude_settings.HOOK_SCRIPTS``, ``workbench/agents/*``), so
# whatever slowed the hook down (a huge payload, a loaded machine), its event is on disk
# before an agent could kill it. ``deliver`` tries the service only with the time left.
DELIVERY_DEADLINE_S = 5.0
MIN_ATTEMPT_S = 0.05  # less left than this: spool at once, a request could not finish
STARTED = time.monotonic()


# ----- stdin: the normalised hook input -------------------------------------------------------


class HookInput:
    """One hook payload, normalised: missing or mistyped fields become ``""``/None.

    The field names are Claude Code's; a platform adapter (``hooks/adapters/``) maps its own
    payload onto them first, and says how to answer (``answer_event``), so the scripts never
    see platform differences.

    Ground truth is Claude Code's hooks reference, summarised in ARCHITECTURE.md ("Claude Code
    hook contract") and captured as real-shaped payloads in ``tests/fixtures/hooks/``. Every
    event carries ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``; then:

    - SessionStart: ``source`` (startup / resume / clear / compact)
    - UserPromptSubmit: ``prompt``
    - PostToolUse: ``tool_name``, ``tool_input``, ``tool_response``, ``tool_use_id``; from a
      subagent also ``agent_id`` and ``agent_type``
    - Stop / SubagentStop: ``stop_hook_active``; SubagentStop also ``agent_id``
    - SessionEnd: ``reason`` (clear / logout / prompt_input_exit / other)

    Tolerant on purpose: hooks are fail-open, and a partially populated event is still worth
    capturing; the service validates and decides. Read-only by convention.
    """

    __slots__ = (
        "hook_event_name",
        "session_id",
        "cwd",
        "transcript_path",
        "source",
        "prompt",
        "reason",
        "tool_name",
        "tool_input",
        "tool_response",
        "tool_use_id",
        "agent_id",
        "agent_type",
        "stop_hook_active",
        "prompt_given",
        "last_assistant_message",
        "platform_source",
        "adapter",
    )

    def __init__(
        self,
        payload: dict[str, Any],
        *,
        prompt_given: bool | None = None,
        adapter: Any = None,
    ) -> None:
        def text(key: str) -> str:
            value = payload.get(key)
            return value if isinstance(value, str) else ""

        self.hook_event_name = text("hook_event_name")
        self.session_id = text("session_id")
        self.cwd = text("cwd")
        self.transcript_path = text("transcript_path")
        self.source = text("source")
        self.prompt = text("prompt")
        # Whether the user typed anything, judged *before* redaction (``parse_input`` passes
        # it): an entirely ``<private>`` prompt redacts to "" but is still a prompt, and the
        # service must hear "private", not "no prompt" (see user_prompt_submit.build_body).
        self.prompt_given = bool(self.prompt.strip()) if prompt_given is None else prompt_given
        self.reason = text("reason")
        self.tool_name = text("tool_name")
        self.tool_input: Any = payload.get("tool_input")
        self.tool_response: Any = payload.get("tool_response")
        self.tool_use_id = text("tool_use_id")
        self.agent_id = text("agent_id")
        self.agent_type = text("agent_type")
        active = payload.get("stop_hook_active")
        self.stop_hook_active = active is True or (isinstance(active, str) and active == "true")
        # None: the platform does not put the answer in the payload (Claude Code: read the
        # transcript); a string (maybe ""): it does, and that is the answer.
        answer = payload.get("last_assistant_message")
        self.last_assistant_message = answer if isinstance(answer, str) else None
        self.adapter = adapter
        self.platform_source = adapter.PLATFORM_SOURCE if adapter is not None else PLATFORM_SOURCE

    def answer_event(self, kind: str) -> str:
        """The ``hookEventName`` this platform expects back for the normalised ``kind``."""
        return self.adapter.event_name(kind) if self.adapter is not None else kind


def platform_from_argv(argv: list[str]) -> str:
    """The ``--platform NAME`` (or ``--platform=NAME``) of the hook command; ``claude`` if none.

    An unknown name falls back to ``claude`` rather than failing: a hook must never break the
    session, and Claude Code's payload is the normalised shape.
    """
    from hooks.adapters import PLATFORMS

    name = DEFAULT_PLATFORM
    for i, arg in enumerate(argv):
        if arg == "--platform" and i + 1 < len(argv):
            name = argv[i + 1]
        elif arg.startswith("--platform="):
            name = arg.partition("=")[2]
    return name if name in PLATFORMS else DEFAULT_PLATFORM


def load_adapter(platform: str) -> Any:
    """The adapter module for ``platform`` (one of ``hooks.adapters.PLATFORMS``)."""
    name = f"hooks.adapters.{platform}"
    __import__(name)  # not importlib.import_module: under -S the importlib package costs ~0.3 ms
    return sys.modules[name]


# How deep ``json.loads`` may nest, counted from wherever it is called. Past the service's
# ``MAX_DEPTH`` on purpose (the redaction walk elides those parts, keeping the event), and well
# inside the C stack (the decoder takes a few hundred bytes of it per level).
LOADS_DEPTH = 3000


def _loads(raw: bytes) -> Any:
    """``json.loads(raw)`` whose nesting limit does not depend on the caller's stack.

    The decoder counts its levels against the interpreter's recursion limit, which the
    caller's frames use up too: the same 900-deep payload parsed in a hook and failed under a
    test runner's deeper stack. So the limit is set, for this call, to the frames in use plus
    ``LOADS_DEPTH``. Invalid UTF-8 is decoded with U+FFFD for the bad bytes.
    """
    frame: FrameType | None = sys._getframe()
    used = 0
    while frame is not None:
        frame, used = frame.f_back, used + 1
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(used + LOADS_DEPTH)
    try:
        try:
            return json.loads(raw)
        except UnicodeDecodeError:
            return json.loads(raw.decode("utf-8", "replace"))
    finally:
        sys.setrecursionlimit(limit)


def parse_input(raw: bytes, platform: str = DEFAULT_PLATFORM) -> HookInput | None:
    """The payload in ``raw``, redacted, storable and normalised from ``platform``'s shape.

    None when empty, not JSON, not an object, or nested past ``LOADS_DEPTH``. Containers
    deeper than ``redact.MAX_DEPTH`` are kept as a marker string (``redact.ELIDED``).

    Invalid UTF-8 is decoded with U+FFFD for the bad bytes (a cut multi-byte character must
    not lose the event); lone surrogates, escaped or not, become U+FFFD too.
    """
    if not raw.strip():
        return None
    try:
        payload = _loads(raw)
    except (ValueError, RecursionError):  # bad JSON, or nested past LOADS_DEPTH
        return None
    if not isinstance(payload, dict):
        return None
    # Normalised first: the prompt may sit elsewhere in a platform's payload (Windsurf nests
    # it in ``tool_info``, OpenCode in its message parts), and whether one was given is judged
    # before redaction (HookInput); then the whole normalised payload is redacted.
    adapter = load_adapter(platform)
    payload = adapter.normalise(payload)
    prompt = payload.get("prompt")
    prompt_given = isinstance(prompt, str) and bool(prompt.strip())
    payload = redact.redact_value(
        payload, surrogates=redact.may_hold_surrogates(raw), max_depth=redact.MAX_DEPTH
    )
    return HookInput(payload, prompt_given=prompt_given, adapter=adapter)


def read_input() -> HookInput | None:
    """Read and parse the whole of stdin (the agent writes one JSON object, then EOF)."""
    return parse_input(sys.stdin.buffer.read(), platform_from_argv(sys.argv[1:]))


# ----- stdout ----------------------------------------------------------------------------------


_emitted = False


def emit(output: dict[str, Any] | None = None) -> None:
    """Print the hook's one JSON object on one line (``{}`` when there is nothing to say).

    ASCII-escaped so the bytes are valid whatever the locale; flushed here so a broken pipe
    surfaces inside ``main`` (and meets the fail-open boundary) rather than at interpreter exit.
    """
    global _emitted
    _emitted = True  # before writing: a write that failed half-way is never followed by another
    sys.stdout.write(json.dumps(output or {}, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def context_output(event: HookInput, kind: str, context: str) -> dict[str, Any]:
    """What a hook prints to give the agent ``context`` (memory) at the normalised ``kind``.

    Claude Code, Gemini CLI and Codex CLI read it from stdout, as
    ``hookSpecificOutput.additionalContext``. A platform whose hooks cannot inject context
    names a ``CONTEXT_FILE`` in its adapter (Cursor, Windsurf: a rules file the agent reads),
    which ``hooks/context_file.py`` keeps up to date; here it gets nothing on stdout.
    """
    if not context or not context_on_stdout(event):
        return {}
    name = event.answer_event(kind)
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}


def context_on_stdout(event: HookInput) -> bool:
    """True when this platform reads context from a hook's stdout (no ``CONTEXT_FILE``)."""
    return getattr(event.adapter, "CONTEXT_FILE", None) is None


def answer(kind: str, output: dict[str, Any], event: HookInput | None = None) -> dict[str, Any]:
    """What the platform expects on stdout for the normalised event ``kind``.

    ``output`` is Claude Code's shape; an adapter with an ``output(kind, result)`` function
    (Cursor's before-events must say ``{"continue": true}``) turns it into its own. Without a
    parsed event (empty or bad stdin) the adapter is the one the command line names.
    """
    adapter = event.adapter if event is not None else None
    if adapter is None:
        adapter = load_adapter(platform_from_argv(sys.argv[1:]))
    shape = getattr(adapter, "output", None)
    return shape(kind, output) if shape is not None else output


def emit_fallback(kind: str = "") -> None:
    """At the fail-open boundary: print ``{}`` (or, given the script's ``kind``, the platform's
    empty answer: ``answer(kind, {})``) unless the script already printed (or tried)."""
    if _emitted:
        return
    try:
        try:
            output = answer(kind, {}) if kind else {}
        except Exception:  # noqa: BLE001 - the adapter failed too: the plain empty answer
            output = {}
        emit(output)
    except BaseException:  # noqa: BLE001 - stdout itself is gone: nothing more can be done
        pass


# ----- where the service is ------------------------------------------------------------------


def data_dir() -> Path:
    return locate.resolve_data_dir()


# port -> the data dir a hook looks for there (``service_port`` records it for ``request``).
_data_dirs: dict[int, Path] = {}


def service_port(root: Path) -> int:
    """The port of ``root``'s service; ``request`` to it then checks it serves ``root``."""
    port = locate.service_port(root)
    _data_dirs[port] = root
    return port


def _instance_id(root: Path) -> str:
    """``root``'s id, or ``NO_INSTANCE`` when it has none yet.

    Always some value: a request without one would be served by any data dir's service, and
    the write would land there before the reply could be checked. A data dir without an id
    has never had a service (the service makes it when it starts), so no service that
    answers can be its own; and a hook writes nothing it does not have to.
    """
    return instance.read(root) or NO_INSTANCE


NO_INSTANCE = "none"  # matches no service's id: the service refuses, the hook spools


class WrongInstance(OSError):
    """The reply came from the service of another data dir: treat it as no service at all."""


# ----- HTTP over a raw socket ------------------------------------------------------------------


class Reply:
    """A parsed HTTP response: status code and the (de-chunked) body bytes."""

    __slots__ = ("status", "body", "instance")

    def __init__(self, status: int, body: bytes, instance: str | None = None) -> None:
        self.status = status
        self.body = body
        self.instance = instance  # the X-Workbench-Instance header: whose service answered

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def request(
    port: int,
    method: str,
    target: str,
    body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    *,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    total_timeout: float = TOTAL_TIMEOUT_S,
) -> Reply:
    """One HTTP/1.1 request to ``127.0.0.1:port``; raises OSError (refused, timeout) or ValueError.

    ``total_timeout`` bounds the whole exchange, connect included: a hook must not hang on a
    service that accepted the connection and then stalled. ``WrongInstance`` when the port
    belongs to a data dir (``service_port``) whose id the reply does not carry.
    """
    deadline = time.monotonic() + total_timeout
    payload = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    lines = [
        f"{method} {target} HTTP/1.1",
        f"Host: {HOST}:{port}",
        "Connection: close",
        "Accept: application/json, text/plain",
        "User-Agent: workbench-hook",
    ]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    root = _data_dirs.get(port)
    expected = _instance_id(root) if root is not None else None
    if expected is not None:
        lines.append(f"{instance.HEADER}: {expected}")
    lines += [f"{key}: {value}" for key, value in (headers or {}).items()]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    # A plain connect to a numeric address: create_connection() would call getaddrinfo(),
    # which imports the idna codec just to encode "127.0.0.1".
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(min(connect_timeout, _remaining(deadline)))
        sock.connect((HOST, port))
        sock.settimeout(_remaining(deadline))
        sock.sendall(head + payload)
        reply = read_response(sock, deadline)
    if root is not None and reply.instance != expected:
        # Trigger: another data dir's service answers on this port (or ours has no id, or an
        # older service none). / Why: posting or reading there is another memory. /
        # Outcome: as if nothing answered: the caller spools or goes without context.
        raise WrongInstance(f"the service on port {port} does not serve {root}")
    return reply


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the service did not answer in time")
    return left


def read_response(sock: socket.socket, deadline: float) -> Reply:
    """Read one response from ``sock``: stop at Content-Length, else read until the peer closes."""
    buf = bytearray()
    head_end = -1
    status, length, chunked, whose = 0, None, False, None
    while True:
        if head_end < 0:
            head_end = buf.find(b"\r\n\r\n")
            if head_end >= 0:
                status, length, chunked, whose = _parse_head(bytes(buf[:head_end]))
        if head_end >= 0 and length is not None and len(buf) - head_end - 4 >= length:
            break
        sock.settimeout(_remaining(deadline))
        data = sock.recv(65536)
        if not data:
            break
        buf += data
    if head_end < 0:
        raise ValueError("the connection closed before a complete HTTP response head")
    content = bytes(buf[head_end + 4 :])
    if chunked:
        content = _dechunk(content)
    elif length is not None:
        if len(content) < length:
            raise ValueError("the connection closed before the whole HTTP body arrived")
        content = content[:length]
    return Reply(status=status, body=content, instance=whose)


def _parse_head(head: bytes) -> tuple[int, int | None, bool, str | None]:
    """The status line, the framing headers and whose service answered: (status,
    content-length, chunked, X-Workbench-Instance or None).

    Numbers must be ASCII digits: latin-1 decoding turns byte 0xB9 into ``"¹"``, which
    ``str.isdigit()`` accepts and ``int()`` does not. A malformed one is a ``ValueError``
    naming it (the caller spools the event, as for any reply it cannot read).
    """
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not _is_number(parts[1]):
        raise ValueError(f"not an HTTP status line: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    length_text = headers.get("content-length", "")
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    if length_text and not chunked and not _is_number(length_text):
        raise ValueError(f"not a valid Content-Length: {length_text[:40]!r}")
    length = int(length_text) if length_text and not chunked else None
    return int(parts[1]), length, chunked, headers.get(_INSTANCE_KEY)


_INSTANCE_KEY = instance.HEADER.lower()


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _dechunk(data: bytes) -> bytes:
    """Decode a ``Transfer-Encoding: chunked`` body (trailers ignored)."""
    out = bytearray()
    pos = 0
    while True:
        line_end = data.find(b"\r\n", pos)
        if line_end < 0:
            raise ValueError("truncated chunked body")
        size_text = data[pos:line_end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise ValueError(f"bad chunk size {size_text[:20]!r}") from None
        if size == 0:
            return bytes(out)
        start = line_end + 2
        if start + size > len(data):
            raise ValueError("truncated chunked body")
        out += data[start : start + size]
        pos = start + size + 2


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def quote(text: str) -> str:
    """Percent-encode ``text`` (UTF-8) for a query value, like ``urllib.parse.quote(safe="")``.

    One expression instead of importing ``urllib.parse`` (several ms of start-up measured with
    ``-X importtime``) in hooks that only escape a path or a prompt.
    """
    return "".join(
        chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8", "replace")
    )


def get_text(
    port: int, path: str, params: dict[str, str], *, total_timeout: float = TOTAL_TIMEOUT_S
) -> str:
    """``GET path?params`` and return the body as text, or ``""`` for any failure or non-2xx.

    For the read-only context queries: a failure means "no context", never a spool file.
    Empty parameter values are left out.
    """
    return fetch_text(port, path, params, total_timeout=total_timeout) or ""


def fetch_text(
    port: int, path: str, params: dict[str, str], *, total_timeout: float = TOTAL_TIMEOUT_S
) -> str | None:
    """As ``get_text``, but None when the service failed to answer: no connection, a
    timeout, an unreadable reply or a 5xx (a 4xx, its judgement of the request, is ``""``).
    The SessionStart hook then reads the store itself."""
    query = "&".join(f"{k}={quote(v)}" for k, v in params.items() if v)
    target = f"{path}?{query}" if query else path
    try:
        reply = request(port, "GET", target, total_timeout=total_timeout)
    except (OSError, ValueError):
        return None
    if reply.status >= 500:
        return None
    return reply.body.decode("utf-8", errors="replace").strip() if reply.ok else ""


# ----- deliver or spool ------------------------------------------------------------------------


def deliver(
    hook: str, path: str, body: dict[str, Any], root: Path | None = None, *, cwd: str = ""
) -> str:
    """Post one event to the service, spooling it when the service cannot take it now.

    Returns what happened: ``"delivered"``, ``"rejected"`` (a 4xx: invalid, parked in
    ``spool/rejected/``, never retried), ``"skipped"`` (not written: an excluded project, or
    settings.json unreadable), ``"spooled"``, or ``"lost"`` (it had to be written to disk and
    the write failed, e.g. the disk is full). ``cwd``: the payload's, so the exclusion rule
    can judge a body that names only its session. The idempotency key is made first, at capture,
    so the spool file name (which starts with the key's nanoseconds) sorts in capture order.
    """
    event_key = spool.new_event_key()
    root = root if root is not None else data_dir()
    reply = None
    # Trigger: the hook is past (or near) its deadline. / Why: an agent kills a hook at its
    # timeout, and a killed hook neither delivers nor spools. / Outcome: the attempt gets only
    # the time left, and none at all when too little is left: the event is spooled.
    left = DELIVERY_DEADLINE_S - (time.monotonic() - STARTED)
    if left >= MIN_ATTEMPT_S:
        headers = {"Idempotency-Key": event_key}
        try:
            reply = request(
                service_port(root),
                "POST",
                path,
                body,
                headers,
                total_timeout=min(TOTAL_TIMEOUT_S, left),
            )
        except (OSError, ValueError):  # refused, timed out, or a reply we could not parse
            reply = None
    if reply is not None and reply.ok:
        return "delivered"
    envelope = spool.Envelope(event_key, path, body, hook=hook, spooled_at_ns=time.time_ns())
    folder, outcome = root / "spool", "spooled"
    if reply is not None and 400 <= reply.status < 500 and reply.status not in RETRYABLE_4XX:
        # Trigger: the service answered 4xx. / Why: it judged this event invalid, and a replay
        # would be rejected the same way forever. / Outcome: parked in rejected/ with the
        # answer, where health and status count it and a person can look.
        envelope.reason = f"HTTP {reply.status}: " + reply.body[:2000].decode("utf-8", "replace")
        folder, outcome = folder / spool.REJECTED, "rejected"
    # Trigger: the event would go to disk. / Why: an excluded project's text must never reach
    # the disk, nor anything while the rule is unreadable (fail closed). / Outcome: the
    # service's exclusion rule, applied here (stdlib), before writing.
    if locate.capture_refusal(root, body, cwd) is not None:
        return "skipped"
    try:
        spool.write(folder, envelope)
    except (OSError, ValueError):  # the writer removed its temp file; the hook must go on
        return "lost"
    return outcome
