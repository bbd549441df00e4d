"""The SessionStart block read straight from the store, read-only: the hook's path when the
service is cold. Stdlib only (the SessionStart hook imports it, only when it needs it).

Why: a service spawned by the hook needs seconds to answer (6+ s on a loaded 2-core machine,
issue 20), longer than a hook may keep a session waiting, so the first session after every
stop used to start with no memory. When the service does not answer at once, the hook builds
the block itself, from the same store, with the same code as the service's route
(``service/routes/context.py``): ``build_session_context``, or ``build_resume_context`` when
``resumed_since`` says the agent resumed a session that was given a block (its ledger rows
are read here too), with the same limits (``limits``: env > settings.json > defaults, an
invalid value falling back to the default as the service reads the file), the same project
scope (the cwd's name and key) and every agent's memories. A user cannot tell the two apart,
except in two ways, both stated in README: colleagues' team rows (DuckDB, far too heavy for a
hook) are not added, and the block is not recorded in the injection ledger (the hook never
writes), so a later resume of that session gets the full block once more.

Read-only and never in the way: the file is opened with the ``mode=ro`` URI and
``query_only``; SQLite may create the ``-wal``/``-shm`` companions of a WAL database, as any
reader does, but never changes the database file. A busy lock is waited on for
``READ_TIMEOUT_S`` at most. No context (``""``) instead of a guess when the store is not
there, is not a database, is locked, or holds another schema than this code's: older (the
service migrates it when it starts; the block's columns may not exist yet) or newer (the
service refuses it). Every failure is a ``sqlite3.Error``, ``OSError`` or ``ValueError``,
caught here: the caller, a hook, must never crash.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from workbench import locate
from workbench.recall.context import ContextLimits, build_session_context
from workbench.recall.resume import MAX_SOURCE_CHARS, build_resume_context, resumed_since
from workbench.store import schema

DB_NAME = "workbench.db"  # ``Settings.db_path``'s name (a test checks they agree)
READ_TIMEOUT_S = 0.5
MAX_SESSION_CHARS = 200  # the route refuses a longer contentSessionId (no context there either)
# setting -> (its default, its maximum): ``Settings``' bounds (all ``ge=0``).
COUNTS = {
    "context_observations": (ContextLimits.observations, 500),
    "context_full": (ContextLimits.full, 50),
    "context_summaries": (ContextLimits.summaries, 100),
}


def session_context(root: Path, cwd: str, session: str = "", source: str = "") -> str:
    """The block the service would answer for this SessionStart, or ``""`` (none, or the
    store could not be read)."""
    if len(session) > MAX_SESSION_CHARS:
        return ""
    path = Path(os.path.abspath(root / DB_NAME))
    # Trigger: no regular file there (no store yet, or a FIFO that would block the open). /
    # Why: a hook never creates the store, and must not hang. / Outcome: no context.
    if not os.path.isfile(path):
        return ""
    try:
        conn = open_read_only(path)
    except (sqlite3.Error, OSError, ValueError):
        return ""
    try:
        if not current_schema(conn):
            return ""
        project, key = locate.project_identity(cwd)
        chosen = limits(root)
        since = resumed_since(conn, session, source[:MAX_SOURCE_CHARS])
        if session and since is not None:
            injection = build_resume_context(conn, [project], chosen, session, since, None, key)
        else:
            injection = build_session_context(conn, [project], chosen, None, key)
        return injection.text.strip()
    except (sqlite3.Error, OSError, ValueError):
        return ""
    finally:
        conn.close()


def open_read_only(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only (a quoted ``file:`` URI, ``mode=ro``, ``query_only``)."""
    conn = sqlite3.connect(
        path.as_uri() + "?mode=ro", uri=True, timeout=READ_TIMEOUT_S, isolation_level=None
    )
    conn.execute("PRAGMA query_only=ON")
    return conn


def current_schema(conn: sqlite3.Connection) -> bool:
    """True when the store records exactly this code's migrations (none pending, none unknown)."""
    recorded = schema.applied(conn)
    known = [name for name, _ in schema.MIGRATIONS]
    return len(recorded) == len(known) and set(recorded) == set(known)


def limits(root: Path) -> ContextLimits:
    """The context settings as the service reads them: ``WORKBENCH_<NAME>`` > settings.json >
    the default, which also stands in for a value out of ``Settings``' bounds."""
    counts: dict[str, int] = {}
    for name, (default, maximum) in COUNTS.items():
        value = locate.parse_count(locate.hook_setting(root, name), default)
        counts[name] = value if value <= maximum else default
    field = locate.hook_setting(root, "context_full_field")
    return ContextLimits(
        observations=counts["context_observations"],
        full=counts["context_full"],
        summaries=counts["context_summaries"],
        full_field="facts" if field == "facts" else "narrative",
        skip_stale=locate.parse_flag(locate.hook_setting(root, "context_skip_stale"), False),
    )
