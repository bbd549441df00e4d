"""Context file hook: write the project's memory where an agent without an injection API reads it.

Cursor's hooks cannot hand context to the model, but Cursor reads the project's rules files
into every chat. So, for a platform whose adapter names a ``CONTEXT_FILE`` (a path under the
workspace root) and renders it (``context_document``), this script fetches the memory that
SessionStart injects elsewhere (``GET /api/context/inject?projects=<project>``, exactly as
``hooks/session_start.py`` asks for it) and writes it there. Cursor runs it twice per turn:

- at the prompt (UserPromptSubmit), after making sure the service runs (Cursor has no session
  start event, so this is where the service is spawned when it is down, and the spool drained);
- at the end of the turn (Stop), so the file holds what this turn left for the next session.

Only that one file is written, and atomically (a temp file beside it, then ``os.replace``), so
Cursor never reads half a file and a symlink in its place is replaced, not followed. Nothing
is written when there is no memory yet, the service cannot answer, or the workspace root is
not an existing absolute folder: a stale file is better than an empty one. No ledger row is
recorded: the file is read by whatever session comes next, not injected into this one.

Prints the platform's empty answer (``_runtime.answer``). Fail-open: see ``hooks/_runtime.py``;
exits 0 whatever happens.
"""

from __future__ import annotations

import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime, session_start  # noqa: E402
from workbench import locate  # noqa: E402

SPAWN_ON = "UserPromptSubmit"  # the event that starts the service when it is down

_kind = ""  # the event being answered, for the fail-open boundary


def target(event: _runtime.HookInput) -> str | None:
    """The file to write for ``event``, or None (no such file for this platform, or no root)."""
    relative = getattr(event.adapter, "CONTEXT_FILE", None)
    root = event.cwd
    if not relative or not root or not os.path.isabs(root):
        return None
    try:
        if not os.path.isdir(root):
            return None
    except ValueError:  # a NUL byte in the path
        return None
    return os.path.join(root, relative)


def write_atomically(path: str, text: str) -> bool:
    """Write ``text`` to ``path`` through a temp file and a rename; False when it failed."""
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        with open(tmp, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True


def refresh(event: _runtime.HookInput) -> bool:
    """Fetch the project's memory and write the platform's context file; True when written."""
    path = target(event)
    if path is None:
        return False
    root = _runtime.data_dir()
    port = _runtime.service_port(root)
    if event.hook_event_name == SPAWN_ON:
        if not session_start.ensure_service(root, port):
            return False
        session_start.request_replay(port)
    context = session_start.fetch_context(port, locate.project_from_cwd(event.cwd))
    if not context:
        return False
    return write_atomically(path, event.adapter.context_document(context))


def main() -> None:
    global _kind
    event = _runtime.read_input()
    if event is None:
        _runtime.emit()
        return
    _kind = event.hook_event_name
    refresh(event)
    _runtime.emit(_runtime.answer(_kind, {}, event))


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        _runtime.emit_fallback(_kind)
    sys.exit(0)
