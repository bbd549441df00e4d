"""Context file hook: write the project's memory where an agent without an injection API reads it.

Cursor's and Windsurf's hooks cannot hand context to the model, but both read the project's
rules files into every chat. So, for a platform whose adapter names a ``CONTEXT_FILE`` (a path
under the workspace root), marks it as ours (its first lines are exactly ``CONTEXT_HEAD``) and
renders it (``context_document``), this script writes there the very block SessionStart
injects elsewhere, got the same way (``hooks/session_start.py``: ``GET
/api/context/inject?projects=<project>&project_key=<key>`` when the service answers at once,
else built from this data dir's store, read-only, ``workbench/recall/cold_context.py``).
Neither agent has a session-start event, so this script is also where the spool is drained
and where the service is spawned when it is down, detached, without waiting for it (issue 20:
a spawned service needs seconds to answer on a loaded machine, and the file would have stayed
stale for the next chat). It runs:

- Cursor: at the prompt and at the end of each turn (``workbench.agents.cursor``);
- Windsurf: after each Cascade response (``workbench.agents.windsurf``).

Only that one file is written, and atomically (a temp file beside it, then ``os.replace``), so
the agent never reads half a file; nothing is written through a symlink. A file of that name
that does not begin with our head, a symlink or anything but a regular file is the user's
and is left alone: a rule of the user's that merely quotes our marker text stays theirs.
Nothing is written when there is no memory yet, neither the service nor the store can give
it (no store, a store that is not a database, locked, of another schema; another data dir's
service on the port), or the workspace root is not an existing absolute folder: a stale file
is better than an empty one. No ledger row is recorded: the file is read by whatever session
comes next, not injected into this one.

Prints the platform's empty answer (``_runtime.answer``). Fail-open: see ``hooks/_runtime.py``;
exits 0 whatever happens.
"""

from __future__ import annotations

import os
import stat
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime, session_start  # noqa: E402

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

_kind = ""  # the event being answered, for the fail-open boundary


def target(adapter: Any, root: str) -> str | None:
    """The file to write under the workspace ``root``, or None: no such file for this platform,
    no real root, or a folder on the way that is a symlink (a cloned repo can carry one that
    leads outside the workspace; we never write through it)."""
    relative = getattr(adapter, "CONTEXT_FILE", None)
    if not relative or not root or not os.path.isabs(root):
        return None
    try:
        if not os.path.isdir(root):
            return None
        folder = root
        for part in relative.split("/")[:-1]:
            folder = os.path.join(folder, part)
            if os.path.islink(folder):
                return None
    except ValueError:  # a NUL byte in the path
        return None
    return os.path.join(root, relative)


def is_foreign(path: str, head: str) -> bool:
    """True when something is at ``path`` that is not our file: the user's rule (it does not
    begin with our ``head``, byte for byte: the front matter and marker lines we write; a
    rule that quotes our marker anywhere else is theirs), a symlink (whatever it points to is
    theirs), or not a regular file at all (a FIFO would block the read, and with it the
    agent's prompt)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False  # nothing there: ours to create
    except (OSError, ValueError):
        return True
    if not stat.S_ISREG(info.st_mode):
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            wanted = head.encode("utf-8")
            start = handle.read(len(wanted))
    except OSError:  # unreadable: leave it alone
        return True
    return start != wanted


def write_atomically(path: str, text: str) -> bool:
    """Write ``text`` to ``path`` through a temp file and a rename; False when it failed.

    The temp file is created, never opened through whatever is at its name (``O_EXCL``,
    ``O_NOFOLLOW``): a symlink planted there is removed, not written through. ``replace``
    for lone surrogates: an answer cut mid-emoji must not cost the file.
    """
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        os.makedirs(folder, exist_ok=True)
        try:
            fd = os.open(tmp, flags, 0o644)
        except FileExistsError:  # a leftover or a planted link: unlink removes the link itself
            os.unlink(tmp)
            fd = os.open(tmp, flags, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8", "replace"))
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True


def refresh(event: _runtime.HookInput) -> bool:
    """Write the platform's context file, replay the spool, start the service if it is down.

    Exactly as SessionStart gets its block (``session_start.memory_at_start``): the service's
    when it answers at once, else this data dir's store's, and nothing waits for a service
    still starting. The service is started whatever happens to the file: for Cursor and
    Windsurf this is the only hook that starts it, so a file we may not write (the user's own
    rule, no workspace) must not leave every later event spooled. True when the file was
    written.
    """
    if getattr(event.adapter, "CONTEXT_FILE", None) is None:
        return False  # a platform that takes context on stdout: not this script's business
    path = target(event.adapter, event.cwd)
    ours = path is not None and not is_foreign(path, event.adapter.CONTEXT_HEAD)
    context = session_start.memory_at_start(_runtime.data_dir(), event.cwd, wanted=ours)
    if not ours or not context:  # None: not our service on our port (nothing spawned)
        return False
    return write_context(event.adapter, event.cwd, context)


def write_context(adapter: Any, root: str, context: str) -> bool:
    """Write ``context`` as ``adapter``'s context file under ``root``; True when written.

    Nothing is written for an empty context, a root that is not a real folder, a symlinked
    folder on the way, or something at that name that is not ours (``is_foreign``).
    """
    path = target(adapter, root)
    if path is None or not context.strip() or is_foreign(path, adapter.CONTEXT_HEAD):
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
