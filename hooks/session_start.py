"""SessionStart hook: make sure the service runs, let the spool drain, inject the memory.

Steps, each bounded so a session never waits long on its memory:

1. ``GET /api/health``: the service is up when the JSON says ``"service": "workbench"``.
2. When nothing answers, spawn ``python -m service`` detached with ``workbench.spawn`` (the
   CLI's spawner too: cwd the data dir, output appended to ``<data_dir>/logs/service.log``) and
   poll health for at most ``SPAWN_BUDGET_S``. The spawn happens under an exclusive,
   non-blocking ``flock`` on ``<data_dir>/spawn.lock``: when it is held, another session is
   spawning right now, so this one only waits. When something that is *not* workbench answers
   on the port, or the workbench service of another data dir (``hooks/_runtime.py``, "Whose
   service"), nothing is spawned (it could not bind anyway) and nothing is injected.
3. ``POST /api/spool/replay``, outcome ignored, so a backlog from a down period drains now
   rather than at the service's next timer (the service also replays when it starts).
4. ``GET /api/context/inject?projects=<project>&contentSessionId=<session>&source=<source>``
   (text/plain; the session id lets the service record the injection in its ledger, and with
   the agent's ``source`` decide what this start needs: a resumed session only what is new
   since its own block, ``workbench/recall/resume.py``; the hook only passes it on).
   Non-empty text is printed as
   ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}``;
   a 404 (the route is not there yet) or any failure means no context, and ``{}``. Gemini CLI
   and Codex CLI take the same shape (with their event name). Cursor and Windsurf cannot take
   context from a hook: ``hooks/context_file.py`` writes it to their rules file instead.

The child's stdout/stderr never point at this hook's pipes: Claude Code waits for those to
close, and the service outlives us (``workbench/spawn.py`` says how it is started, and why).

Fail-open: see ``hooks/_runtime.py``; exits 0 whatever happens.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    import subprocess

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime  # noqa: E402
from workbench import locate, spawn  # noqa: E402

HOOK = "SessionStart"
SPAWN_BUDGET_S = 5.0
HEALTH_TIMEOUT_S = 1.0
POLL_INTERVAL_S = 0.05
REPLAY_TIMEOUT_S = 1.0
SOURCE_CHARS = 64  # startup/resume/clear/compact are short; the route refuses past 200
CONTEXT_TIMEOUT_S = 3.0  # building context may touch the store cold, right after a spawn

UP, DOWN, FOREIGN = "up", "down", "foreign"


def probe(port: int) -> str:
    """``UP`` (workbench answers), ``DOWN`` (nothing answers) or ``FOREIGN`` (something else)."""
    try:
        reply = _runtime.request(port, "GET", "/api/health", total_timeout=HEALTH_TIMEOUT_S)
    except _runtime.WrongInstance:  # another data dir's service: ours could not bind the port
        return FOREIGN
    except (OSError, ValueError):
        return DOWN
    data = reply.json()
    if reply.ok and isinstance(data, dict) and data.get("service") == "workbench":
        return UP
    return FOREIGN


def wait_until_up(port: int, deadline: float, proc: subprocess.Popen[bytes] | None = None) -> bool:
    """Poll health until it answers or ``deadline``; stop early if our child has exited."""
    while True:
        if probe(port) == UP:
            return True
        if proc is not None and proc.poll() is not None:
            return False  # it died (the reason is in logs/service.log)
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_INTERVAL_S)


def ensure_service(root: Path, port: int, budget_s: float = SPAWN_BUDGET_S) -> bool:
    """True when the workbench service answers on ``port``, spawning it if nothing does."""
    state = probe(port)
    if state != DOWN:
        return state == UP
    deadline = time.monotonic() + budget_s
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock_fd = os.open(root / "spawn.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # Trigger: another hook holds the spawn lock. / Why: it is starting the service
            # right now, and a second one could not bind the port. / Outcome: only wait.
            return wait_until_up(port, deadline)
        if probe(port) == UP:  # the previous lock holder's service came up meanwhile
            return True
        return wait_until_up(port, deadline, spawn.spawn_service(root, port))
    finally:
        os.close(lock_fd)  # closing the descriptor releases the lock


def request_replay(port: int) -> None:
    """Ask the service to drain the spool now; a failure or 404 is fine (fire and forget)."""
    try:
        _runtime.request(port, "POST", "/api/spool/replay", {}, total_timeout=REPLAY_TIMEOUT_S)
    except (OSError, ValueError):
        pass


def fetch_context(port: int, cwd: str, session_id: str = "", source: str = "") -> str:
    """The memory to inject for the project of ``cwd``, or ``""`` when there is none or it
    failed. Asked by the project's key as well as its name: two folders named ``api`` are
    two projects (``locate.project_identity``). ``source`` is the agent's, clipped: the
    service decides what it means."""
    project, key = locate.project_identity(cwd)
    params = {"projects": project, "project_key": key, "contentSessionId": session_id}
    params["source"] = source[:SOURCE_CHARS]
    return _runtime.get_text(port, "/api/context/inject", params, total_timeout=CONTEXT_TIMEOUT_S)


def main() -> None:
    event = _runtime.read_input()
    if event is None:
        _runtime.emit()
        return
    root = _runtime.data_dir()
    port = _runtime.service_port(root)
    context = ""
    if ensure_service(root, port):
        request_replay(port)
        context = fetch_context(port, event.cwd, event.session_id, event.source)
    _runtime.emit(_runtime.context_output(event, HOOK, context))


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        _runtime.emit_fallback()
    sys.exit(0)
