"""One transcript file into the events log: resume at its offset, parse, ingest, save.

The same ``Ingestor`` the hook routes use does the storing, so a transcript's prompt, tool
call and turn end are the hooks' ``session_init``, ``observation`` and ``summarize``:
redacted, skipped and deduplicated by the same rules, with the session's platform
(``claude-code`` / ``codex-cli``), its id from the transcript and its project from its
``cwd``, and the time the transcript says (history keeps its dates).

Never stored twice:
- a line is read once: the offset after the last whole line is saved with the file's
  identity (``offsets``); the events of a line re-read (a crash before the save, a rotated
  file) have the same keys and come back as duplicates;
- a tool call is keyed by its ``tool_use_id`` as the hooks key it, so a call both delivered
  by PostToolUse and read here is one event;
- a session whose prompts or turn ends the hooks delivered (``hook_session``) is left to the
  hooks: its lines are counted as already present.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from workbench.clock import now_ms
from workbench.errors import WorkbenchError
from workbench.ingest import Ingestor, IngestResult
from workbench.locate import project_identity
from workbench.store.connection import atomic
from workbench.transcripts import offsets
from workbench.transcripts.claude import ClaudeParser
from workbench.transcripts.codex import CodexParser
from workbench.transcripts.lines import read_lines
from workbench.transcripts.records import TranscriptEvent, epoch_ms, parse_line

log = logging.getLogger("workbench.transcripts")
QUIET_S = 60.0  # a file untouched this long is a finished session: its open turn is ended
SAVE_EVERY = 200  # lines between offset saves within one file
CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})


class Parser(Protocol):
    platform_source: str
    ignored: int
    unknown: int

    def feed(self, record: dict[str, Any], offset: int) -> list[TranscriptEvent]: ...
    def flush(self) -> list[TranscriptEvent]: ...
    def state(self) -> dict[str, Any]: ...


@dataclass
class FileReport:
    """What one pass over one file did; ``to_json`` is the route's reply."""

    path: str
    platform: str = ""
    sessions: set[str] = field(default_factory=set)
    lines: int = 0
    imported: int = 0
    present: int = 0  # events already in the log, or sessions the hooks delivered
    skipped: int = 0  # refused by a rule (excluded project, private prompt, own tools…)
    ignored: int = 0  # lines that carry no memory
    unknown: int = 0  # lines of a type or shape not known here
    bad_lines: int = 0  # not JSON, or longer than the limit
    pending_bytes: int = 0  # a last line still being written, left for later
    restarted: bool = False  # the file was rotated or rewritten: read again from 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "platform": self.platform,
            "sessions": sorted(self.sessions),
            "lines": self.lines,
            "imported": self.imported,
            "present": self.present,
            "skipped": self.skipped,
            "ignored": self.ignored,
            "unknown": self.unknown,
            "badLines": self.bad_lines,
            "pendingBytes": self.pending_bytes,
            "restarted": self.restarted,
            "errors": self.errors[:20],
        }


def make_parser(platform: str, state: dict[str, Any]) -> Parser:
    return CodexParser(state) if platform == "codex" else ClaudeParser(state)


def guess_platform(path: Path, first: dict[str, Any] | None) -> str:
    """``codex`` for a rollout file (by name, or by its first line's type), else ``claude``."""
    if path.name.startswith("rollout-"):
        return "codex"
    if first is not None and first.get("type") in CODEX_TYPES and "payload" in first:
        return "codex"
    return "claude"


def hook_session(conn: sqlite3.Connection, session_id: str) -> bool:
    """True when hooks delivered a prompt, turn end or end of this session (keys not ours)."""
    row = conn.execute(
        "SELECT 1 FROM events WHERE content_session_id = ?"
        " AND kind IN ('session_init', 'summarize', 'session_end')"
        " AND (event_key IS NULL OR event_key NOT LIKE 'transcript:%') LIMIT 1",
        (session_id,),
    ).fetchone()
    return row is not None


class FileImport:
    """One pass over one file with one ``Ingestor``."""

    def __init__(
        self,
        ingestor: Ingestor,
        path: Path,
        max_line_bytes: int,
        *,
        store: bool = True,
        settle_ms: int = 0,
    ) -> None:
        self.ingestor = ingestor
        self.path = path
        self.max_line_bytes = max_line_bytes
        self.store = store  # False: only follow the file (parser state, offset), store nothing
        # Lines younger than this are left for a later pass (the watcher: see ``watch``).
        self.settle_ms = settle_ms
        self.report = FileReport(str(path))
        self._sessions: dict[str, bool] = {}  # session id -> left to the hooks
        self._identity: tuple[int, int, str] = (0, 0, "")  # inode, head bytes, head sha256

    def run(self, *, quiet_s: float = QUIET_S) -> FileReport:
        try:
            with open(self.path, "rb") as stream:
                self._read(stream, os.fstat(stream.fileno()), quiet_s)
        except FileNotFoundError:
            self.report.errors.append(f"{self.path}: the file is gone (deleted or moved)")
        except IsADirectoryError:
            self.report.errors.append(f"{self.path}: a folder, not a transcript file")
        except PermissionError as exc:
            self.report.errors.append(f"{self.path}: not readable ({exc.strerror})")
        except OSError as exc:
            self.report.errors.append(f"{self.path}: read failed ({exc})")
        return self.report

    def _read(self, stream: Any, stat: os.stat_result, quiet_s: float) -> None:
        conn = self.ingestor.store.conn
        key = str(self.path)
        mark = offsets.load(conn, key)
        if mark is not None and not offsets.still_valid(mark, stream, stat):
            self.report.restarted = True
            mark = None
        # What identifies the file, taken once, before reading: hashing the head seeks, and
        # must never move the stream read_lines is reading (it re-read the file in a loop).
        self._identity = (stat.st_ino, *offsets.head(stream, stat.st_size))
        start = mark.offset if mark else 0
        state = mark.state if mark else {}
        platform = mark.platform if mark else ""
        parser: Parser | None = make_parser(platform, state) if platform else None
        position = start
        since_save = 0
        newest = now_ms() - self.settle_ms
        for line in read_lines(stream, start, self.max_line_bytes):
            record = parse_line(line.data) if line.data is not None else None
            if self.settle_ms and record is not None:
                at = epoch_ms(record.get("timestamp"))
                if at is not None and at > newest:
                    break  # too young: the hooks may not have delivered it yet
            self.report.lines += 1
            if record is None:
                self.report.bad_lines += 1
                position = line.end
                continue
            if parser is None:
                platform = guess_platform(self.path, record)
                parser = make_parser(platform, {})
            self._ingest(parser.feed(record, line.start), parser.platform_source)
            position = line.end
            since_save += 1
            if since_save >= SAVE_EVERY:
                self._save(platform, position, parser)
                since_save = 0
        self.report.pending_bytes = max(0, stat.st_size - position)
        if parser is not None:
            if time.time() - stat.st_mtime >= quiet_s and not self.report.pending_bytes:
                self._ingest(parser.flush(), parser.platform_source)
            self.report.ignored += parser.ignored
            self.report.unknown += parser.unknown
        self.report.platform = platform
        self._save(platform, position, parser)  # "" until a line says which

    def _save(self, platform: str, position: int, parser: Parser | None) -> None:
        inode, n, digest = self._identity
        state = parser.state() if parser else {}
        mark = offsets.Mark(str(self.path), platform, inode, n, digest, position, state)
        conn = self.ingestor.store.conn
        with atomic(conn):
            offsets.save(conn, mark)

    # ----- events ---------------------------------------------------------------------------
    def _ingest(self, found: list[TranscriptEvent], platform_source: str) -> None:
        if not self.store:
            return
        for event in found:
            self.report.sessions.add(event.session_id)
            if self._left_to_hooks(event, platform_source):
                self.report.present += 1
                continue
            try:
                result = self._apply(event, platform_source)
            except WorkbenchError as exc:
                self.report.errors.append(f"{self.path}: {event.key}: {exc}")
                continue
            if result.status in ("queued", "stored"):
                self.report.imported += 1
            elif result.status == "duplicate":
                self.report.present += 1
            else:
                self.report.skipped += 1

    def _left_to_hooks(self, event: TranscriptEvent, platform_source: str) -> bool:
        known = self._sessions.get(event.session_id)
        if known is None:
            known = hook_session(self.ingestor.store.conn, event.session_id)
            self._sessions[event.session_id] = known
            if not known:  # open it with its platform before any event of it is stored
                project, project_key = project_identity(event.cwd)
                self.ingestor.session_init(
                    content_session_id=event.session_id,
                    project=project,
                    prompt=None,
                    platform_source=platform_source,
                    project_key=project_key,
                    at_ms=event.at_ms,
                )
        return known

    def _apply(self, event: TranscriptEvent, platform_source: str) -> IngestResult:
        ingestor = self.ingestor
        if event.kind == "prompt":
            project, project_key = project_identity(event.cwd)
            return ingestor.session_init(
                content_session_id=event.session_id,
                project=project,
                prompt=event.text,
                platform_source=platform_source,
                event_key=event.key,
                project_key=project_key,
                at_ms=event.at_ms,
            )
        if event.kind == "tool":
            return ingestor.observation(
                content_session_id=event.session_id,
                tool_name=event.tool_name,
                tool_input=event.tool_input,
                tool_response=event.tool_response,
                cwd=event.cwd,
                tool_use_id=event.tool_use_id,
                agent_id=event.agent_id,
                event_key=event.key,
                at_ms=event.at_ms,
            )
        return ingestor.summarize(
            content_session_id=event.session_id,
            last_assistant_message=event.text,
            event_key=event.key,
            at_ms=event.at_ms,
        )


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_of(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(str(path), threading.Lock())


def import_file(
    ingestor: Ingestor,
    path: Path,
    max_line_bytes: int,
    *,
    quiet_s: float = QUIET_S,
    store: bool = True,
    settle_ms: int = 0,
) -> FileReport:
    """Read what is new in ``path`` into the log (see the module docstring).

    ``settle_ms``: stop before the first line whose timestamp is younger than this (the
    watcher's ``transcript_watch_settle_s``). ``store=False`` reads the file to its end
    without storing anything: its offset and the
    parser's state (the session, waiting calls) are saved, so later lines are imported as
    they come (the watcher with ``transcript_watch_history`` off). One pass per file at a
    time (the watcher and ``import-transcripts`` may meet on one): the second waits, then
    starts from the offset the first saved.
    """
    with _lock_of(path):
        found = FileImport(ingestor, path, max_line_bytes, store=store, settle_ms=settle_ms)
        return found.run(quiet_s=quiet_s)
