"""Why a session starts, and what memory that start needs (SessionStart's ``source``).

Claude Code sends ``source`` with every SessionStart (its hooks reference): ``startup`` (a new
session), ``resume`` (``--resume``, ``--continue``, ``/resume``: the earlier conversation is
loaded back, memory block included), ``clear`` (``/clear``: the conversation is gone) and
``compact`` (the conversation was replaced by a summary, which may have dropped the block).
Gemini CLI sends startup / resume / clear, Codex CLI startup / resume, and OpenCode's plugin
always startup: OpenCode builds the system prompt afresh for each model request, so a resumed
session holds none of its earlier block (``hooks/adapters/opencode.py``).

So:

- ``resume``: the conversation still holds the block this session was given, so only what
  is new since this session's last SessionStart block is shown (rows of *other* sessions:
  its own are in its conversation), and nothing at all when nothing is new. A session with
  no block on record (an agent that gave the resumed session a new id, a service that was
  down at its start) gets the full block: a repeat costs tokens, a gap costs the memory.
- ``fork`` (Claude Code's copy of a conversation): the same as resume; a fork has a new id,
  so it gets the full block unless the ledger knows that id.
- ``startup``, ``clear``, ``compact``, no source, and any value no agent documents: the
  full block, as a new session.

A block the hook built from the store with the service cold (``cold_context``) is not in the
ledger (the hook never writes the store), so a later resume of that session gets the full
block once more: a repeat costs tokens, a gap costs the memory. Stdlib only, like ``context``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from workbench.recall import ledger_reads, render
from workbench.recall.context import (
    PROJECT_CHARS,
    ContextLimits,
    Injection,
    Since,
    block_rows,
    render_session_context,
)

RESUMED_SOURCES = frozenset({"resume", "fork"})
MAX_SOURCE_CHARS = 200  # the route's bound; the hook clips what it sends to this


def is_resume(source: str | None) -> bool:
    """True when ``source`` says the agent reloaded an earlier conversation."""
    return (source or "").strip().lower() in RESUMED_SOURCES


def resumed_since(conn: sqlite3.Connection, session: str | None, source: str | None) -> int | None:
    """When a resumed ``session`` was last given a block: what is new is counted from then.
    None when a full block is due (not a resume, no session id, or no block on record).

    The one decision both paths make the same way: the service's route and the hook reading
    the store itself with the service cold (``workbench.recall.cold_context``).
    """
    if not session or not is_resume(source):
        return None
    return last_block_ms(conn, session)


def last_block_ms(conn: sqlite3.Connection, session: str | None) -> int | None:
    """When this session was last given a SessionStart block, or None (never, or no id)."""
    return ledger_reads.last_injection_ms(conn, session or "", "session_start")


def build_resume_context(
    conn: sqlite3.Connection,
    projects: Sequence[str],
    limits: ContextLimits,
    session: str,
    since_ms: int,
    platform_source: str | None = None,
    project_key: str | None = None,
) -> Injection:
    """What is new for a resumed ``session`` since its block at ``since_ms``: other
    sessions' observations and summaries from then on, less those this session was already
    shown; an empty injection (no text) when there are none. Colleagues' team rows are left
    to the full block (the lake has no cheap "since")."""
    shown = ledger_reads.injected_ids(conn, session, ["session_start"])
    rows, digests = block_rows(
        conn, projects, limits, platform_source, project_key, Since(since_ms, session)
    )
    newest = [row for row in rows if row.id not in shown]
    if not newest and not digests:
        return Injection(text="", tokens=0)
    names = ", ".join(render.neutral(p, PROJECT_CHARS) for p in projects)
    subject = f"new in {names} since this session's last memory block"
    return render_session_context(projects, newest, digests, limits, subject=subject)
