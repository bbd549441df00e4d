"""Carry out a plan: each memory file written atomically, or deleted; the automatic run.

A file is written as claude-mem does it (temp file, then rename) but with a unique temp name
beside the target, flushed, the file's mode kept, and ``os.replace``: an agent reading the
file sees the old text or the new, never half. Before writing, the file is read again and
must still be what the plan saw spliced (same text outside our block): a user editing it
meanwhile wins, and the file is left for the next run.

``after_summary`` is the service's hook (``service/runtime.py``): with ``folder_memory_files``
on, each stored summary queues its project's root (the session's cwd's project) for one run on
a background thread of its own, off the hook path and off the worker; runs for one root that
pile up while one is going collapse into one.
"""

from __future__ import annotations

import logging
import os
import queue
import sqlite3
import stat
import tempfile
import threading
from pathlib import Path

from workbench import line_endings
from workbench.folder_memory import plan, section
from workbench.folder_memory.plan import Planned

log = logging.getLogger(__name__)


def write_atomically(path: Path, text: str) -> None:
    """``text`` in ``path``, with the file's CRLF line endings if it has them: the plan reads
    it with universal newlines, so a CRLF ``CLAUDE.md`` would come back LF (``line_endings``)."""
    current = path.read_bytes() if path.exists() else None
    text = line_endings.kept(text, current)
    mode = stat.S_IMODE(path.stat().st_mode) if current is not None else 0o644
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _still_as_planned(item: Planned) -> bool:
    """The file outside our block is what the plan saw (nobody edited it since)."""
    try:
        now = item.file.read_text("utf-8") if item.file.exists() else ""
        if item.text is None:  # delete: nothing but our block was there
            return not section.strip(now).strip()
        return section.strip(now) == section.strip(item.text) or not now
    except (OSError, UnicodeDecodeError, section.MarkersBroken):
        return False


def carry_out(items: list[Planned]) -> list[Planned]:
    """Write/delete what ``items`` say; return them with the action actually taken."""
    done = []
    for item in items:
        if item.action in ("skip", "unchanged"):
            done.append(item)
            continue
        if item.file.is_symlink() or not _still_as_planned(item):
            done.append(
                Planned(item.folder, item.file, "skip", item.observations, "changed meanwhile")
            )
            continue
        try:
            if item.action == "delete":
                item.file.unlink()
            elif item.text is not None:
                write_atomically(item.file, item.text)
        except OSError as exc:
            done.append(Planned(item.folder, item.file, "skip", item.observations, str(exc)))
            continue
        done.append(item)
    return done


def forget_rows(
    db_path: Path, root: Path, filename: str, ids: set[int], folders: set[Path]
) -> list[Planned]:
    """Take ``ids`` (just forgotten) out of the memory files of ``folders`` (under ``root``,
    ``plan.folders_listing``) now (``plan.without``), and return what was done. A forget runs
    it whether or not ``folder_memory_files`` is on: a file written while it was on lists them
    too, and the rows must leave before the forget reports, not at the next summary."""
    from workbench.store.connection import connect

    conn = connect(db_path, readonly=True)
    try:
        items = plan.without(conn, root, filename, ids, folders)
    finally:
        conn.close()
    return carry_out(items)


class AutoRunner:
    """One background thread running ``generate`` for the roots summaries name."""

    def __init__(self, db_path: Path, filename: str, limit: int, exclude: list[str]) -> None:
        self.db_path, self.filename, self.limit, self.exclude = db_path, filename, limit, exclude
        self.roots: queue.Queue[Path | None] = queue.Queue()
        self.pending: set[Path] = set()
        self.lock = threading.Lock()
        # One run at a time, this thread's or a forget's (``forget``): two runs of one root
        # would plan from the same file and the second would find it changed meanwhile.
        self.run_lock = threading.Lock()
        self.runs = 0
        self.thread = threading.Thread(
            target=self._loop, name="workbench-folder-memory", daemon=True
        )
        self.thread.start()

    def request(self, root: Path) -> None:
        with self.lock:
            if root in self.pending:
                return
            self.pending.add(root)
        self.roots.put(root)

    def stop(self) -> None:
        self.roots.put(None)
        self.thread.join(timeout=5)

    def _loop(self) -> None:
        while (root := self.roots.get()) is not None:
            with self.lock:
                self.pending.discard(root)
            try:
                with self.run_lock:
                    self.run(root)
            except Exception:  # a folder file must never stop the service
                log.exception("folder memory run failed for %s", root)

    def forget(self, root: Path, ids: set[int], folders: set[Path]) -> list[Planned]:
        """``forget_rows`` under this runner's lock (no run of its own meanwhile)."""
        with self.run_lock:
            return forget_rows(self.db_path, root, self.filename, ids, folders)

    def run(self, root: Path) -> list[Planned]:
        from workbench.store.connection import connect

        conn = connect(self.db_path, readonly=True)
        try:
            items = plan.generate(conn, root, self.filename, self.limit, self.exclude)
        finally:
            conn.close()
        done = carry_out(items)
        self.runs += 1
        return done


def summary_root(conn: sqlite3.Connection, content_session_id: str | None) -> Path | None:
    """The checkout a session worked in (its first event's cwd's), or its project's folder."""
    if not content_session_id:
        return None
    from workbench.locate import checkout_root, project_identity

    row = conn.execute(
        "SELECT json_extract(payload, '$.cwd') FROM events WHERE content_session_id = ?"
        " AND json_valid(payload) AND json_type(payload, '$.cwd') = 'text' ORDER BY id LIMIT 1",
        (content_session_id,),
    ).fetchone()
    if row is None or not row[0]:
        return None
    # The session's own checkout (a linked worktree is one), else the project's folder.
    root = checkout_root(str(row[0])) or Path(project_identity(str(row[0])).key)
    return root if root.is_absolute() and root.is_dir() else None
