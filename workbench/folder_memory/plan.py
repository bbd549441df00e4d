"""From a project's observations to one planned change per memory file.

Reads the store (read-only): the observations of the project keyed by the root's identity
(``workbench.locate.project_identity``, so a worktree is its main checkout's project), newest
first. A stored path relative to its session's cwd (``workbench.recall.file_history``) is
resolved against that session's cwd, taken from its first event that has one, or the root. A
folder gets the ``folder_memory_observations`` newest observations that read or changed a file
directly in it (claude-mem: ``isDirectChild``). Nothing is written here: ``apply`` does that.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.folder_memory import places, section
from workbench.locate import checkout_root, project_identity
from workbench.tokens import estimate_tokens

SCAN_LIMIT = 5000  # newest observations looked at per run


@dataclass(frozen=True)
class Planned:
    """One memory file: what would happen to it and why."""

    folder: Path
    file: Path
    action: str  # create | update | unchanged | skip | strip | delete
    observations: int = 0
    reason: str = ""
    text: str | None = None  # the file's new text (None: delete it, or nothing to write)


def _paths(value: str | None) -> list[str]:
    try:
        found = json.loads(value or "[]")
    except json.JSONDecodeError:
        return []
    return [p for p in found if isinstance(p, str)] if isinstance(found, list) else []


def session_cwds(conn: sqlite3.Connection, key: str) -> dict[str, str]:
    """content_session_id -> its cwd (the first event that has one), for the project."""
    rows = conn.execute(
        "SELECT e.content_session_id, json_extract(e.payload, '$.cwd'), min(e.id)"
        " FROM events AS e WHERE e.content_session_id IN"
        " (SELECT content_session_id FROM sessions WHERE project_key = ?)"
        " AND json_valid(e.payload) AND json_type(e.payload, '$.cwd') = 'text'"
        " GROUP BY e.content_session_id",
        (key,),
    )
    return {str(r[0]): str(r[1]) for r in rows if r[0] and r[1]}


def entries_by_folder(
    conn: sqlite3.Connection, root: Path, limit: int
) -> dict[Path, list[section.Entry]]:
    """Real folder -> its newest observations (at most ``limit``), for the project at ``root``."""
    rows = conn.execute(
        "SELECT id, type, title, subtitle, narrative, facts, files_read, files_modified,"
        " created_at_epoch, content_session_id FROM observations WHERE project_key = ?"
        " ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        (project_identity(str(root)).key, SCAN_LIMIT),
    )
    found: dict[Path, list[section.Entry]] = defaultdict(list)
    for row, folders in _with_folders(conn, root, rows):
        entry = _entry(row)
        for folder in folders:
            if len(found[folder]) < limit:
                found[folder].append(entry)
    return dict(found)


def folders_listing(conn: sqlite3.Connection, root: Path, ids: Iterable[int]) -> set[Path]:
    """The real folders under ``root`` whose memory file may list one of ``ids``: the folders
    of the files they read or changed, resolved as ``entries_by_folder`` resolves them. Read
    before a forget deletes the rows, so it looks at those files only, not the whole tree."""
    root = places.real(root)
    rows = conn.execute(
        "SELECT id, files_read, files_modified, content_session_id FROM observations"
        " WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(ids))),),
    )
    found: set[Path] = set()
    for _, folders in _with_folders(conn, root, rows):
        found |= {f for f in folders if places.relative(f, root) is not None}
    return found


def _with_folders(
    conn: sqlite3.Connection, root: Path, rows: Iterable[sqlite3.Row]
) -> Iterator[tuple[sqlite3.Row, set[Path]]]:
    """Each observation row with the real folders of the files it read or changed, seen from
    the checkout at ``root`` (a path relative to its session's cwd resolved against it)."""
    cwds = session_cwds(conn, project_identity(str(root)).key)
    # (stored path, base) -> real folder: resolving is a syscall per path component, and the
    # same few files come back in observation after observation.
    resolved: dict[tuple[str, str], Path | None] = {}
    checkouts: dict[str, Path | None] = {}
    for row in rows:
        base = cwds.get(str(row["content_session_id"]), str(root))
        if base not in checkouts:
            found_root = checkout_root(base)
            checkouts[base] = places.real(found_root) if found_root is not None else None
        folders = set()
        for stored in _paths(row["files_read"]) + _paths(row["files_modified"]):
            if (stored, base) not in resolved:
                folder = places.folder_of(stored, Path(base))
                resolved[stored, base] = places.in_checkout(folder, checkouts[base], root)
            if (folder := resolved[stored, base]) is not None:
                folders.add(folder)
        yield row, folders


def generate(
    conn: sqlite3.Connection, root: Path, filename: str, limit: int, exclude: list[str]
) -> list[Planned]:
    """One ``Planned`` per folder the project's observations touched, in path order."""
    root = places.real(root)
    planned = []
    for folder, entries in sorted(entries_by_folder(conn, root, limit).items()):
        target = folder / filename
        why = places.refusal(folder, root, exclude) or places.file_refusal(target)
        if why:
            planned.append(Planned(folder, target, "skip", len(entries), why))
            continue
        planned.append(_one(folder, target, section.render(entries), len(entries)))
    return planned


def _entry(row: sqlite3.Row) -> section.Entry:
    """An observation row (id, type, title, subtitle, narrative, facts, created_at_epoch) as
    the section shows it."""
    tokens = estimate_tokens(row["title"], row["subtitle"], row["narrative"], row["facts"])
    return section.Entry(
        int(row["id"]),
        int(row["created_at_epoch"] or 0),
        str(row["type"] or ""),
        str(row["title"] or ""),
        tokens,
    )


def without(
    conn: sqlite3.Connection,
    root: Path,
    filename: str,
    ids: set[int],
    folders: Iterable[Path] | None = None,
) -> list[Planned]:
    """Every ``filename`` under ``root`` (in ``folders`` only, when given: ``folders_listing``)
    whose block lists one of ``ids`` (just forgotten), its block rendered again from the other
    observations it lists, or taken out when none is left (the file deleted when nothing else
    was in it).

    Why not ``generate``: it plans only the folders the project's newest observations touch,
    so a folder that listed only forgotten ones kept them; and rendering from the rows the
    file lists changes nothing else in it (no newer rows, no older ones dropped).
    """
    planned: list[Planned] = []
    for folder, target, old, (start, end) in _ours(root, filename, planned, folders):
        listed = section.listed_ids(old[start:end])
        if not listed & ids:
            continue
        rows = conn.execute(
            "SELECT id, type, title, subtitle, narrative, facts, created_at_epoch"
            " FROM observations WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(listed - ids)),),
        ).fetchall()
        if rows:
            entries = [_entry(row) for row in rows]
            planned.append(_one(folder, target, section.render(entries), len(entries)))
        else:
            planned.append(_stripped(folder, target, section.strip(old)))
    return planned


def _read(target: Path) -> str | None:
    try:
        return target.read_text("utf-8") if target.exists() else ""
    except (OSError, UnicodeDecodeError):
        return None


def _one(folder: Path, target: Path, block: str, count: int) -> Planned:
    old = _read(target)
    if old is None:
        return Planned(folder, target, "skip", count, "cannot be read as UTF-8 text")
    try:
        new = section.splice(old, block)
    except section.MarkersBroken as exc:
        return Planned(folder, target, "skip", count, f"markers edited by hand: {exc}")
    if new == old:
        return Planned(folder, target, "unchanged", count)
    action = "update" if target.exists() else "create"
    return Planned(folder, target, action, count, text=new)


def clean(root: Path, filename: str) -> list[Planned]:
    """Every ``filename`` under ``root`` holding our block: strip it, or delete the file if
    nothing else is left (claude-mem's ``--clean``); denied folders are not walked."""
    planned: list[Planned] = []
    for folder, target, old, _ in _ours(root, filename, planned):
        planned.append(_stripped(folder, target, section.strip(old)))
    return planned


def _ours(
    root: Path, filename: str, planned: list[Planned], folders: Iterable[Path] | None = None
) -> list[tuple[Path, Path, str, tuple[int, int]]]:
    """(folder, file, its text, where our block is) of every readable ``filename`` under
    ``root`` (or in ``folders``) holding our block (denied folders not walked, symlinks not
    followed), in path order; a file whose markers were edited by hand is added to
    ``planned`` as a skip."""
    found = []
    if folders is None:
        targets = _walk(places.real(root), filename)
    else:
        targets = [f / filename for f in folders if (f / filename).is_file()]
    for target in sorted(targets):
        if places.file_refusal(target):  # before reading: a FIFO would block the read
            continue
        old = _read(target)
        if old is None:
            continue
        try:
            where = section.find(old)
        except section.MarkersBroken as exc:
            reason = f"markers edited by hand: {exc}"
            planned.append(Planned(target.parent, target, "skip", 0, reason))
            continue
        if where is not None:
            found.append((target.parent, target, old, where))
    return found


def _stripped(folder: Path, target: Path, new: str) -> Planned:
    """The file without our block (``new``), or deleted when nothing else was in it."""
    if new.strip():
        return Planned(folder, target, "strip", 0, text=new)
    return Planned(folder, target, "delete", 0)


def _walk(root: Path, filename: str) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):  # followlinks=False: never leaves the root
        dirs[:] = [d for d in dirs if d not in places.DENIED]
        if filename in files:
            found.append(Path(folder) / filename)
    return found
