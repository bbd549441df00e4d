"""An agent's config file is the user's: read it, lock it and write it back, and nothing else.

Every agent writer (``workbench.agents``: Claude Code's settings.json and ~/.claude.json,
Codex's hooks.json and config.toml, Gemini, Cursor, Windsurf, OpenCode) goes through here:

- **Only a regular file is read.** A FIFO at the path would block ``install`` forever, a link
  to ``/dev/zero`` would fill memory, a directory has no text: each is refused with a message
  that names the path and the fix (``ConfigFileRefused``), before anything is written.
- **A symlink is followed, and kept.** Dotfile managers link ``~/.claude/settings.json`` into a
  repository: the target is what gets read, backed up and replaced (atomically, beside the
  target); the link stays a link. A link to nowhere is refused: where it should lead is the
  user's call.
- **One writer at a time.** ``locked`` takes ``fcntl.flock`` on a lock file beside the target
  for the whole read-modify-write (and removes it after), so twelve concurrent installs
  cannot lose each other's entries or trip over one temp file.
- **Atomic, with a backup.** A temp file with a unique name beside the target, flushed, then
  ``os.replace``: the agent never reads half a file. The previous bytes are kept first as
  ``<name>.workbench-backup-<UTC time>`` (never overwriting an earlier backup), with the file's
  own mode (``~/.claude.json`` is owner-only and holds account state).
- **Its line endings are kept.** The writers serialise (JSON, TOML) or join lines (Goose's
  YAML) with ``\n``; a file whose every line ends in CRLF (edited on Windows, or copied from
  there) is written back with CRLF, so install does not rewrite each of its lines and
  uninstall gives it back byte for byte (``workbench.line_endings``).
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from workbench import line_endings
from workbench.errors import WorkbenchError

NOTHING_CHANGED = "nothing was changed"
_held: set[Path] = set()  # targets this process holds the lock of (``locked`` is re-entrant)


class ConfigFileRefused(WorkbenchError):
    """The config path is not a regular file we may read and replace (FIFO, device, folder)."""

    code = "AGENT_CONFIG_NOT_A_FILE"


def target(path: Path) -> Path:
    """The file ``path`` stands for: itself, or where its symlink(s) lead.

    Raises ``ConfigFileRefused`` for a link that leads nowhere.
    """
    if not path.is_symlink():
        return path
    resolved = Path(os.path.realpath(path))
    if not resolved.exists() and not resolved.is_symlink():
        raise ConfigFileRefused(
            f"{path} is a symlink to {resolved}, which does not exist: create that file (or "
            f"remove the link) and run the command again; {NOTHING_CHANGED}"
        )
    return resolved


def _refuse_kind(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        what, fix = "a directory", f"move it away (`mv {path} {path}.dir`)"
    elif stat.S_ISFIFO(mode):
        what, fix = "a named pipe (FIFO)", f"remove it (`rm {path}`)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        what, fix = "a device", f"remove the link or file (`rm {path}`)"
    else:
        what, fix = "not a regular file", f"remove it (`rm {path}`)"
    raise ConfigFileRefused(
        f"{path} is {what}, not a config file workbench can read: {fix} and run the command "
        f"again; {NOTHING_CHANGED}"
    )


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when nothing is at ``path``; refuses what is not a file.

    The kind is checked before the open (a FIFO's open would block) and again on the open
    descriptor, which is opened non-blocking, so a swap in between cannot hang us either.
    """
    real = target(path)
    try:
        _refuse_kind(path, os.stat(real).st_mode)
    except FileNotFoundError:
        return None
    except PermissionError as exc:
        raise ConfigFileRefused(
            f"cannot read {path} ({exc.strerror}): fix its permissions and run the command "
            f"again; {NOTHING_CHANGED}"
        ) from None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ConfigFileRefused(
            f"cannot read {path} ({exc.strerror}): fix it and run the command again; "
            f"{NOTHING_CHANGED}"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        _refuse_kind(path, os.fstat(handle.fileno()).st_mode)
        return handle.read()


def read_text(path: Path) -> str | None:
    """``read_bytes`` decoded as UTF-8 (no newline translation: a CRLF file stays CRLF)."""
    data = read_bytes(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigFileRefused(
            f"{path} is not UTF-8 text ({exc}); save it as UTF-8 by hand ({NOTHING_CHANGED}) "
            "and run the command again"
        ) from None


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the lock of ``path``'s file (``fcntl.flock`` on ``.<name>.workbench-lock`` beside it).

    The lock file goes again on release, so the user's folder is left as it was: a waiter
    that then finds the name gone or holding another file retries on the new one (the
    classic lock-file protocol). Re-entrant within one process, so a writer may call another
    that locks the same file.
    """
    real = target(path)
    if real in _held:
        yield
        return
    real.parent.mkdir(parents=True, exist_ok=True)
    lock = real.parent / f".{real.name}.workbench-lock"
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder before us removed it: take the one there now
    _held.add(real)
    try:
        yield
    finally:
        _held.discard(real)
        lock.unlink(missing_ok=True)  # while still holding it: see the docstring
        os.close(fd)  # closing releases the lock


def write_text(path: Path, text: str, new_mode: int = 0o644) -> Path | None:
    """Back up the current file (if any) and replace it with ``text``; return the backup.

    Follows a symlink to its target (the link stays); keeps the target's mode, else
    ``new_mode``. The backup sits beside ``path``, where the user looks for it.
    """
    real = target(path)
    current = read_bytes(path)  # refuses a FIFO, a device, a folder
    real.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = new_mode
    if current is not None:
        mode = stat.S_IMODE(os.stat(real).st_mode)
        backup = _backup(path, current, mode)
    text = line_endings.kept(text, current)
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            os.fchmod(handle.fileno(), mode)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup


def _backup(path: Path, data: bytes, mode: int) -> Path:
    """``data`` in a new ``<name>.workbench-backup-<time>[-n]`` beside ``path`` (never reused)."""
    stem = f"{path.name}.workbench-backup-{time.strftime('%Y%m%d-%H%M%S')}"
    n = 0
    while True:
        backup = path.with_name(stem if n == 0 else f"{stem}-{n}")
        try:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            n += 1
            continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        return backup
