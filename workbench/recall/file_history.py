"""File history before a Read: which earlier sessions touched this file, best first.

Stored paths come in two forms: compressors keep a path relative to the session's cwd when it
is inside it, and absolute otherwise. So a file is looked up by *candidates*: its absolute path
(matches in any project: it names one file on this machine) and its cwd-relative path (matches
only in the cwd's project, since ``src/app.py`` of another project is another file). "The
cwd's project" is its key (``workbench.locate.project_identity``), not its name: ``src/app.py``
of ``clientB/api`` is not the file of ``clientA/api``.

Selection (``select``): one observation per session, scored, at most ``file_context_max``:
an observation that *modified* the file beats one that only read it; then one that touched
few files (it is about this file, not a sweep across the tree); then the newest. Sessions are
ordered by the same key, so the list reads "changes first".

Skip rules live where the facts are. The PreToolUse hook checks what only the file system
knows (subagent, missing, directory, smaller than ``file_context_min_bytes``) before asking;
``file_context`` checks staleness: when the file changed after the newest matching observation
(its mtime is later), the history may describe code that no longer exists, and nothing is
shown.

The block ends with claude-mem's hint to read the file's structure with the code tools
(``smart_outline``/``smart_unfold``, issue 22) when ``workbench.code`` has a grammar for it.

Lookup cost: with the ``observation_files`` table (one row per path and observation, kept by
triggers) it is one indexed lookup; without it, a scan of the ``files_read``/``files_modified``
JSON text (``instr`` on the JSON-quoted path, so ``"src/a.py"`` never matches
``"x/src/a.py"``), confirmed in Python. The scan is correct but grows with the history; see
``bench/context.py`` for both figures.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from workbench.code.languages import has_outline
from workbench.locate import project_identity
from workbench.models import Observation
from workbench.recall import render
from workbench.recall.context import STALE_MARK, TITLE_CHARS, Injection, header
from workbench.staleness.check import stale_ids
from workbench.store import observations as obs_store
from workbench.tokens import estimate_tokens

PATH_CHARS = 160
MATCH_LIMIT = 500
FILE_TABLE = "observation_files"


@dataclass(frozen=True)
class Candidates:
    """The forms a file's path may be stored in."""

    absolute: tuple[str, ...]  # match in any project
    relative: tuple[str, ...]  # match only in the project keyed ``project_key``
    project: str | None  # the cwd's project name (for people)
    display: str
    project_key: str | None = None  # the cwd's project key: what relative paths match in

    @property
    def all(self) -> tuple[str, ...]:
        return self.absolute + self.relative


@dataclass(frozen=True)
class FileHit:
    """One observation that touched the file, and how."""

    observation: Observation
    modified: bool
    files_touched: int

    @property
    def session(self) -> str:
        return self.observation.content_session_id or f"observation:{self.observation.id}"

    def key(self) -> tuple[int, int, int, int]:
        """Sort key, best first: modified, few files, newest."""
        obs = self.observation
        return (0 if self.modified else 1, self.files_touched, -obs.created_at_epoch, -obs.id)


def _strip_prefix(path: str, cwd: str) -> str | None:
    """``path`` relative to ``cwd`` as the compressors write it (``rules.call.rel``)."""
    root = cwd.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :].lstrip("/") or None
    return None


def candidates(path: str, cwd: str = "") -> Candidates:
    """Absolute and cwd-relative forms of ``path`` (as given and normalised, deduplicated)."""
    text = path.strip()
    cwd = cwd.strip()
    absolute: list[str] = []
    relative: list[str] = []
    if posixpath.isabs(text):
        absolute += [text, posixpath.normpath(text)]
    elif text:
        relative += [text, posixpath.normpath(text)]
        if posixpath.isabs(cwd):
            absolute.append(posixpath.normpath(posixpath.join(cwd, text)))
    if cwd:
        for full in list(absolute):
            for root in (cwd, posixpath.normpath(cwd)):
                rest = _strip_prefix(full, root)
                if rest:
                    relative += [rest, posixpath.normpath(rest)]
    abs_unique = tuple(dict.fromkeys(absolute))
    rel_unique = tuple(p for p in dict.fromkeys(relative) if p not in abs_unique and p != ".")
    display = rel_unique[0] if rel_unique and abs_unique else (abs_unique or rel_unique or ("",))[0]
    identity = project_identity(cwd) if cwd else None
    return Candidates(
        absolute=abs_unique,
        relative=rel_unique,
        project=identity.name if identity else None,
        display=display,
        project_key=identity.key if identity else None,
    )


def _has_file_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FILE_TABLE,)
    ).fetchone()
    return row is not None


def _keys(cands: Candidates) -> tuple[str, str]:
    """The cwd's project key, and its bare name: rows whose folder is unknown are keyed by
    the name (``recall.context.project_scope``)."""
    return cands.project_key or "", cands.project or cands.project_key or ""


def _matching_ids(conn: sqlite3.Connection, cands: Candidates) -> list[tuple[int, int]]:
    """``(id, created_at_epoch)`` of every row naming an absolute candidate (any project) or a
    relative one (the cwd's project only).

    The project test is in SQL: a common relative name (``README.md``) of other projects must
    not crowd this project's rows out of the ``LIMIT``. Only two narrow columns come back;
    the full rows are loaded for the page alone.
    """
    relative = cands.relative if cands.project_key else ()
    if _has_file_table(conn):
        parts = []
        params: list[str] = []
        if cands.absolute:
            marks = ",".join("?" * len(cands.absolute))
            parts.append(f"SELECT observation_id FROM {FILE_TABLE} WHERE path IN ({marks})")
            params += cands.absolute
        if relative:
            marks = ",".join("?" * len(relative))
            parts.append(
                f"SELECT f.observation_id FROM {FILE_TABLE} f"
                " JOIN observations p ON p.id = f.observation_id"
                f" WHERE f.path IN ({marks}) AND p.project_key IN (?, ?)"
            )
            params += [*relative, *_keys(cands)]
        if not parts:
            return []
        sql = f"SELECT id, created_at_epoch FROM observations WHERE id IN ({' UNION '.join(parts)})"
        return [(int(r[0]), int(r[1])) for r in conn.execute(sql, params)]
    # Trigger: no file table (the shipped schema). / Why: the paths live only inside JSON
    # text. / Outcome: one table scan testing the JSON-quoted path, so "src/a.py" never
    # matches inside "x/src/a.py"; ``find`` confirms each hit on the parsed lists.
    test = "(instr(files_read, ?) > 0 OR instr(files_modified, ?) > 0)"

    def quoted(paths: tuple[str, ...]) -> list[str]:
        return [json.dumps(p, ensure_ascii=False) for p in paths for _ in (0, 1)]

    clauses = [test] * len(cands.absolute)
    scan_params: list[str] = quoted(cands.absolute)
    if relative:
        clauses.append(f"(project_key IN (?, ?) AND ({' OR '.join([test] * len(relative))}))")
        scan_params += [*_keys(cands), *quoted(relative)]
    if not clauses:
        return []
    sql = f"SELECT id, created_at_epoch FROM observations WHERE {' OR '.join(clauses)}"
    return [(int(r[0]), int(r[1])) for r in conn.execute(sql, scan_params)]


def _rows(conn: sqlite3.Connection, cands: Candidates, limit: int) -> list[sqlite3.Row]:
    """The newest ``limit`` matching rows, newest first."""
    newest = sorted(_matching_ids(conn, cands), key=lambda p: (-p[1], -p[0]))[:limit]
    if not newest:
        return []
    ids = [i for i, _ in newest]
    rows = {
        int(r["id"]): r
        for r in conn.execute(
            f"SELECT * FROM observations WHERE id IN ({','.join('?' * len(ids))})", ids
        )
    }
    return [rows[i] for i in ids if i in rows]


def find(conn: sqlite3.Connection, cands: Candidates, *, limit: int = MATCH_LIMIT) -> list[FileHit]:
    """Observations that read or modified the file, newest first (at most ``limit``)."""
    if not cands.all:
        return []
    hits: list[FileHit] = []
    for row in _rows(conn, cands, limit):
        obs = obs_store.from_row(row)
        names = set(cands.absolute)
        if cands.relative and obs.project_key in _keys(cands):
            names |= set(cands.relative)
        read = names.intersection(obs.files_read)
        modified = names.intersection(obs.files_modified)
        if read or modified:
            touched = len(set(obs.files_read) | set(obs.files_modified))
            hits.append(FileHit(obs, bool(modified), touched))
    return hits


def select(hits: list[FileHit], max_items: int) -> list[FileHit]:
    """The best observation of each session, sessions ordered best first, at most ``max_items``."""
    best: dict[str, FileHit] = {}
    for hit in hits:
        current = best.get(hit.session)
        if current is None or hit.key() < current.key():
            best[hit.session] = hit
    return sorted(best.values(), key=FileHit.key)[:max_items]


def is_stale(hits: list[FileHit], mtime_ms: int | None) -> bool:
    """True when the file changed after the newest observation of it (history may be wrong)."""
    if mtime_ms is None or not hits:
        return False
    return mtime_ms > max(h.observation.created_at_epoch for h in hits)


def mtime_of(path: str) -> int | None:
    """The file's mtime in epoch ms, or None when the service cannot see it."""
    try:
        return Path(path).stat().st_mtime_ns // 1_000_000
    except (OSError, ValueError):
        return None


def render_file_context(
    display: str, chosen: list[FileHit], stale: frozenset[int] = frozenset()
) -> Injection:
    """The fenced file-history block for the chosen hits (already in order); the ids in
    ``stale`` are marked (a file they cite changed since: ``workbench.staleness``)."""
    lines = [
        header([], subject=f"file {render.neutral(display, PATH_CHARS)}"),
        "Earlier sessions that touched this file (one line per session, changes first; UTC):",
    ]
    for hit in chosen:
        obs = hit.observation
        action = "modified" if hit.modified else "read"
        others = hit.files_touched - 1
        extra = f" (+{others} other file{'s' if others != 1 else ''})" if others > 0 else ""
        lines.append(
            f"- #{obs.id} {render.stamp(obs.created_at_epoch)} {action} "
            f"{render.marker(obs.type)} {render.neutral(obs.title, TITLE_CHARS)}{extra}"
            f"{STALE_MARK if obs.id in stale else ''}"
        )
    ids = ", ".join(str(h.observation.id) for h in chosen)
    lines.append(
        f"Details: MCP `get_observations` with ids [{ids}], or POST /api/observations/batch."
    )
    if has_outline(display):
        lines.append(outline_hint(display))
    text = render.fence("\n".join(lines))
    return Injection(
        text=text,
        tokens=estimate_tokens(text),
        items=[(h.observation.id, "file") for h in chosen],
        discovery_tokens=sum(h.observation.discovery_tokens for h in chosen),
    )


def outline_hint(display: str) -> str:
    """The last line: the code tools read structure for less than a re-read (claude-mem's hint).

    Only for a file of a language ``workbench.code`` has a grammar for. The path is defused
    like the header's and quoted as a string argument (backslashes and quotes escaped).
    """
    path = render.neutral(display, PATH_CHARS).replace("\\", "\\\\").replace('"', '\\"')
    return (
        f'Need a structural map first? MCP `smart_outline("{path}")`: signatures and line '
        f'ranges, cheaper than re-reading; `smart_unfold("{path}", "<symbol>")` for one '
        "function."
    )


def file_context(
    conn: sqlite3.Connection,
    path: str,
    cwd: str = "",
    *,
    mtime_ms: int | None = None,
    max_items: int = 15,
    skip_stale: bool = False,
) -> Injection:
    """The block to inject before reading ``path``, or an empty ``Injection`` when skipped.

    ``mtime_ms`` comes from the hook (it stat()s the file anyway); when absent, the service
    stats the absolute candidate itself. Older observations whose cited files (this one or
    others) changed since are marked stale, or left out with ``skip_stale``
    (``context_skip_stale``).
    """
    cands = candidates(path, cwd)
    hits = find(conn, cands)
    if not hits:
        return Injection(text="", tokens=0)
    if mtime_ms is None and cands.absolute:
        mtime_ms = mtime_of(cands.absolute[0])
    if is_stale(hits, mtime_ms):
        return Injection(text="", tokens=0)
    if skip_stale:
        gone = stale_ids(conn, [h.observation.id for h in hits])
        hits = [h for h in hits if h.observation.id not in gone]
        if not hits:
            return Injection(text="", tokens=0)
    chosen = select(hits, max_items)
    stale = frozenset(stale_ids(conn, [h.observation.id for h in chosen]))
    return render_file_context(cands.display, chosen, stale)
