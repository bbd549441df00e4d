"""This data dir's machine id: which of an author's machines published a lake row.

Why: one author may publish from several machines (a laptop and a desktop), and each store
numbers its rows from 1, so ``(author, local_id)`` does not name one row. The high-water marks
are kept per (author, machine): with marks per author only, a second machine skipped its rows
below the first machine's mark. The id is a random hex string generated once, the first time
this data dir publishes, and kept in ``<data_dir>/team_machine_id``: not in settings.json,
which users edit and copy between machines. A store restored into a new data dir gets a new id;
its rows already in the lake are recognised by their content hashes and not published again.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

FILENAME = "team_machine_id"
_VALID = re.compile(r"[0-9a-f]{32}\Z")


def machine_id(data_dir: Path) -> str:
    """The id stored in ``data_dir``, made (atomically, once) when there is none or it is bad."""
    path = data_dir / FILENAME
    try:
        current = path.read_text("utf-8").strip()
    except FileNotFoundError:
        current = ""
    if _VALID.match(current):
        return current
    data_dir.mkdir(parents=True, exist_ok=True)
    fresh = uuid.uuid4().hex
    tmp = path.with_name(f".{FILENAME}.{fresh}")
    tmp.write_text(fresh + "\n", encoding="utf-8")
    if current:  # unreadable content: replace it
        os.replace(tmp, path)
        return fresh
    try:  # two first runs at once: the first link wins, the other reads it
        os.link(tmp, path)
    except FileExistsError:
        return machine_id(data_dir)
    finally:
        tmp.unlink(missing_ok=True)
    return fresh
