"""A small memory written by three agents, for the ``platform_source`` filter tests.

Project ``shop`` has one session per known platform (Claude Code, Gemini CLI, Codex CLI) on
three days of December 2026, each with a prompt, one observation whose title names its agent,
and a summary; project ``blog`` has one Gemini CLI session. Only platforms listed in
``workbench.platforms`` are used, so the filters that validate the value accept them.
"""

from __future__ import annotations

from workbench.clock import ms_from_iso
from workbench.models import ObservationDraft, SummaryDraft
from workbench.store import observations, sessions, summaries
from workbench.store.connection import atomic
from workbench.store.database import Store

# session -> (project, platform_source, day of December 2026, observation type, title)
SESSIONS = {
    "shop-claude": ("shop", "claude-code", 1, "bugfix", "Claude fixed the cart rounding"),
    "shop-gemini": ("shop", "gemini-cli", 2, "refactor", "Gemini split the checkout module"),
    "shop-codex": ("shop", "codex-cli", 3, "feature", "Codex added coupon codes"),
    "blog-gemini": ("blog", "gemini-cli", 4, "feature", "Gemini added the RSS feed"),
}
TITLES = {sid: spec[4] for sid, spec in SESSIONS.items()}


def at(day: int, hour: int) -> int:
    return ms_from_iso(f"2026-12-{day:02d}T{hour:02d}:00:00Z")


def seed(store: Store) -> dict[str, int]:
    """Write the sessions; returns session id -> its observation's id."""
    ids: dict[str, int] = {}
    conn = store.conn
    with atomic(conn):
        for sid, (project, platform, day, kind, title) in SESSIONS.items():
            session = sessions.ensure(conn, sid, project, platform, at_ms=at(day, 8))
            sessions.record_prompt(conn, session, f"{title} please", at_ms=at(day, 9))
            draft = ObservationDraft(
                type=kind,
                title=title,
                narrative=f"{title}, as {platform} saw it.",
                concepts=[platform],
                files_modified=[f"/src/{project}/{sid}.py"],
            )
            oid, _ = observations.insert(
                conn,
                draft,
                content_session_id=sid,
                project=project,
                prompt_number=1,
                created_ms=at(day, 10),
                discovery_tokens=100 * day,
            )
            ids[sid] = oid
            summaries.upsert(
                conn,
                SummaryDraft(request=f"{title} please", learned=f"learned by {platform}"),
                content_session_id=sid,
                project=project,
                prompt_number=1,
                created_ms=at(day, 18),
            )
    return ids
