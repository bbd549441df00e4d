"""Which data dir a service serves: a random id kept in ``<data_dir>/instance_id``. Stdlib only.

Two data dirs can meet on one port (a ``port`` setting copied between them, an older
workbench's shared default port), and then a client of one would read and write the other's
memory. So every data dir carries an id, made once (random, 0600) by whoever needs it first,
and:

- the service sends its data dir's id as the ``X-Workbench-Instance`` header on every reply
  (and as ``instanceId`` in ``/api/health``), and refuses with 421 a request whose
  ``X-Workbench-Instance`` header names another id;
- the CLI, the MCP server and the hooks send the id of *their* data dir and check the reply's:
  a mismatch is "not our service" (the CLI and MCP refuse, naming both data dirs; a hook
  spools, as if the service were down).

Reading the id is one small file read: hooks afford it on every request.
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_NAME = "instance_id"
HEADER = "X-Workbench-Instance"
ID_CHARS = 32  # 128 random bits, as hex
WRONG_INSTANCE_STATUS = 421  # Misdirected Request: this server is not the one meant


def is_valid(text: object) -> bool:
    """True for an id as ``ensure`` writes one: 32 lowercase hex digits."""
    return (
        isinstance(text, str)
        and len(text) == ID_CHARS
        and all(c in "0123456789abcdef" for c in text)
    )


def read(data_dir: Path) -> str | None:
    """The data dir's id, or None when it has none yet (or the file holds something else)."""
    try:
        with open(os.path.join(data_dir, FILE_NAME), "rb") as handle:
            text = handle.read(ID_CHARS + 2).decode("ascii", "replace").strip()
    except (OSError, ValueError):
        return None
    return text if is_valid(text) else None


def ensure(data_dir: Path) -> str:
    """The data dir's id, made now if it has none. The data dir must exist.

    Written to a private temp file and then hard-linked into place: a reader never sees a
    half-written id, and when two processes make one at once the first link wins and both
    return that one. A file holding something that is not an id is replaced (it identifies
    nothing).
    """
    found = read(data_dir)
    if found is not None:
        return found
    path = os.path.join(data_dir, FILE_NAME)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (os.urandom(ID_CHARS // 2).hex() + "\n").encode("ascii"))
    finally:
        os.close(fd)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            if read(data_dir) is None:  # not an id: ours replaces it
                os.replace(tmp, path)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    found = read(data_dir)
    if found is None:
        raise OSError(f"could not write the data dir's id to {path}")
    return found
