"""SessionStart hook: inject the memory at once, from the service or, when it is cold, the store.

Steps, each bounded so a session never waits long on its memory:

1. ``GET /api/health``: the service is up when the JSON says ``"service": "workbench"``.
2. Up: ``POST /api/spool/replay``, outcome ignored, so a backlog from a down period drains now
   rather than at the service's next timer; then
   ``GET /api/context/inject?projects=<project>&contentSessionId=<session>&source=<source>``
   (text/plain; the session id lets the service record the injection in its ledger, and with
   the agent's ``source`` decide what this start needs: a resumed session only what is new
   since its own block, ``workbench/recall/resume.py``; the hook only passes it on).
3. Not answering at once (issue 20: a spawned service needs seconds to answer, more than a
   hook may wait on a loaded machine), or failing the context request (no reply in time, a
   5xx): the hook builds the very same block itself, from its own data dir's store opened
   read-only (``workbench/recall/cold_context.py``: the route's code, limits and ``source``
   rule; no team rows, no ledger row). Nothing answering (connection refused): it also
   spawns the service, detached, with ``workbench.spawn`` (the CLI's spawner too: cwd the
   data dir, output appended to ``<data_dir>/logs/service.log``), and never waits for it. The
   spawn happens under an exclusive, non-blocking ``flock`` on ``<data_dir>/spawn.lock``,
   which then records the child's pid: while the lock is held, or its pid is alive and less
   than ``spawn.SPAWN_GRACE_S`` old, another session is starting the service, so this one spawns
   nothing. A port that accepts and never answers (a hung service) is held: nothing is
   spawned (it could not bind). Something that is *not* workbench answering on the port, or
   the workbench service of another data dir (``hooks/_runtime.py``, "Whose service"): no
   spawn and no context (this data dir's own service cannot run there).

Non-empty text is printed as
``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}``;
no text means ``{}``. Gemini CLI and Codex CLI take the same shape (with their event name).
Cursor and Windsurf cannot take context from a hook: ``hooks/context_file.py`` writes it to
their rules file instead.

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

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime  # noqa: E402
from workbench import locate, spawn  # noqa: E402

HOOK = "SessionStart"
HEALTH_TIMEOUT_S = 1.0
REPLAY_TIMEOUT_S = 1.0
SOURCE_CHARS = 64  # startup/resume/clear/compact are short; the route refuses past 200
CONTEXT_TIMEOUT_S = 3.0  # building context may touch the store cold, right after a spawn

UP, DOWN, SILENT, FOREIGN = "up", "down", "silent", "foreign"


def probe(port: int) -> str:
    """``UP`` (workbench answers), ``DOWN`` (nothing listens), ``SILENT`` (the port is held
    but no answer came in time) or ``FOREIGN`` (something else answers)."""
    try:
        reply = _runtime.request(port, "GET", "/api/health", total_timeout=HEALTH_TIMEOUT_S)
    except _runtime.WrongInstance:  # another data dir's service: ours could not bind the port
        return FOREIGN
    except TimeoutError:  # accepted (or queued) and never answered: a spawn could not bind
        return SILENT
    except (OSError, ValueError):
        return DOWN
    data = reply.json()
    if reply.ok and isinstance(data, dict) and data.get("service") == "workbench":
        return UP
    return FOREIGN


def start_service(root: Path, port: int) -> None:
    """Spawn the service detached unless another session is starting it; never wait for it."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock_fd = os.open(root / spawn.SPAWN_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another hook is spawning it right now
        if spawned_recently(lock_fd) or probe(port) != DOWN:
            return  # a service is starting, or came up (or holds the port) meanwhile
        child = spawn.spawn_service(root, port)
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, f"{child.pid} {int(time.time())}".encode("ascii"), 0)
    finally:
        os.close(lock_fd)  # closing the descriptor releases the lock


def spawned_recently(lock_fd: int) -> bool:
    """True when ``spawn.lock`` names a service spawned less than ``spawn.SPAWN_GRACE_S`` ago
    that is still running: it is starting, and a second one would only compete for the CPU."""
    try:
        pid = spawn.recent_spawn(os.pread(lock_fd, 64, 0).decode("ascii"))
    except (OSError, ValueError):  # not ours to read
        return False
    if pid is None:  # never spawned, or long ago
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False  # it died (the reason is in logs/service.log)
    except PermissionError:
        return True  # alive, another user's pid: presumed ours, for the grace period only
    return True


def request_replay(port: int) -> None:
    """Ask the service to drain the spool now; a failure or 404 is fine (fire and forget)."""
    try:
        _runtime.request(port, "POST", "/api/spool/replay", {}, total_timeout=REPLAY_TIMEOUT_S)
    except (OSError, ValueError):
        pass


def ask_context(port: int, cwd: str, session_id: str = "", source: str = "") -> str | None:
    """The service's block for the project of ``cwd`` (``""``: none), or None when the
    service failed to answer. Asked by the project's key as well as its name: two folders
    named ``api`` are two projects (``locate.project_identity``). ``source`` is the agent's,
    clipped: the service decides what it means."""
    project, key = locate.project_identity(cwd)
    params = {"projects": project, "project_key": key, "contentSessionId": session_id}
    params["source"] = source[:SOURCE_CHARS]
    return _runtime.fetch_text(port, "/api/context/inject", params, total_timeout=CONTEXT_TIMEOUT_S)


def context_for(
    root: Path, port: int, state: str, cwd: str, session_id: str = "", source: str = ""
) -> str:
    """The block for the project of ``cwd``: the service's when it is ``UP`` and answers,
    else the one built from ``root``'s store (``""``: none, or neither could be read).

    Shared with ``hooks/context_file.py`` (Cursor's and Windsurf's rules file), so both ask
    with the same project scope and fall back the same way.
    """
    context = ask_context(port, cwd, session_id, source) if state == UP else None
    if context is None:
        # Trigger: the service did not answer at once, or failed the context request. /
        # Why: it can need longer to come up than the session may wait. / Outcome: the
        # same block, read from this data dir's store (read-only).
        context = context_from_store(root, cwd, session_id, source)
    return context


def memory_at_start(
    root: Path, cwd: str, session_id: str = "", source: str = "", wanted: bool = True
) -> str | None:
    """What a session start does with ``root``'s service: probe it, drain the spool when it
    is up, get the block (``context_for``; skipped when not ``wanted``: ``""``), and start
    the service when nothing listens. None when another program or data dir holds the port:
    no context to trust, nothing to spawn.

    Shared with ``hooks/context_file.py`` (Cursor's and Windsurf's rules file).
    """
    port = _runtime.service_port(root)
    state = probe(port)
    if state == FOREIGN:
        return None
    if state == UP:
        request_replay(port)
    context = context_for(root, port, state, cwd, session_id, source) if wanted else ""
    if state == DOWN:
        # After the block is read: the child competes for the CPU from its first instant.
        start_service(root, port)
    return context


def context_from_store(root: Path, cwd: str, session_id: str = "", source: str = "") -> str:
    """The same block, read from ``root``'s store by this process (the service is cold).

    Imported here: most session starts find the service up and never pay for it.
    """
    from workbench.recall import cold_context

    return cold_context.session_context(root, cwd, session_id, source[:SOURCE_CHARS])


def main() -> None:
    event = _runtime.read_input()
    if event is None:
        _runtime.emit()
        return
    root = _runtime.data_dir()
    context = memory_at_start(root, event.cwd, event.session_id, event.source)
    if context is None:
        _runtime.emit()
        return
    _runtime.emit(_runtime.context_output(event, HOOK, context))


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        _runtime.emit_fallback()
    sys.exit(0)
