"""Context file hook: write the project's memory where an agent without an injection API reads it.

Cursor's and Windsurf's hooks cannot hand context to the model, but both read the project's
rules files into every chat. So, for a platform whose adapter names a ``CONTEXT_FILE`` (a path
under the workspace root), marks it as ours (``CONTEXT_MARK``) and renders it
(``context_document``), this script fetches the memory that SessionStart injects elsewhere
(``GET /api/context/inject?projects=<project>``, exactly as ``hooks/session_start.py`` asks for
it) and writes it there. Neither agent has a session-start event, so this script is also where
the service is spawned when it is down, and the spool drained. It runs:

- Cursor: at the prompt and at the end of each turn (``workbench.agents.cursor``);
- Windsurf: after each Cascade response (``workbench.agents.windsurf``).

Only that one file is written, and atomically (a temp file beside it, then ``os.replace``), so
the agent never reads half a file and a symlink in its place is replaced, not followed. A file
of that name without our mark is the user's own rule and is never overwritten. Nothing is
written when there is no memory yet, the service cannot answer, or the workspace root is not
an existing absolute folder: a stale file is better than an empty one. No ledger row is
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

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any
from workbench import locate  # noqa: E402

_kind = ""  # the event being answered, for the fail-open boundary


def target(adapter: Any, root: str) -> str | None:
    """The file to write under the workspace ``root``, or None (no such file for this
    platform, or no real root)."""
    relative = getattr(adapter, "CONTEXT_FILE", None)
    if not relative or not root or not os.path.isabs(root):
        return None
    try:
        if not os.path.isdir(root):
            return None
    except ValueError:  # a NUL byte in the path
        return None
    return os.path.join(root, relative)


def is_foreign(path: str, mark: str) -> bool:
    """True when ``path`` exists and is not ours (no ``mark`` near its top): the user's rule."""
    try:
        if not os.path.lexists(path) or os.path.islink(path):
            return False  # nothing there, or a link we replace rather than follow
        with open(path, encoding="utf-8", errors="replace") as handle:
            return mark not in handle.read(4096)
    except (OSError, ValueError):  # unreadable: leave it alone
        return True


def write_atomically(path: str, text: str) -> bool:
    """Write ``text`` to ``path`` through a temp file and a rename; False when it failed.

    ``errors="replace"``: a lone surrogate (an answer cut mid-emoji) must not cost the file.
    """
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
    path = target(event.adapter, event.cwd)
    if path is None or is_foreign(path, event.adapter.CONTEXT_MARK):
        return False
    root = _runtime.data_dir()
    port = _runtime.service_port(root)
    if not session_start.ensure_service(root, port):
        return False
    session_start.request_replay(port)
    context = session_start.fetch_context(port, locate.project_from_cwd(event.cwd))
    return write_context(event.adapter, event.cwd, context)


def write_context(adapter: Any, root: str, context: str) -> bool:
    """Write ``context`` as ``adapter``'s context file under ``root``; True when written.

    Nothing is written for an empty context, a root that is not a real folder, or a file of
    that name that is the user's own (``is_foreign``).
    """
    path = target(adapter, root)
    if path is None or not context.strip() or is_foreign(path, adapter.CONTEXT_MARK):
        return False
    return write_atomically(path, adapter.context_document(context))


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
