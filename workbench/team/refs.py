"""Citable team ids: ``team:<author>:<local id>``, and the full observation each one names.

Why not the number alone: a colleague's hit carried *their* local id, so ``workbench show 12``
fetched *your* observation 12. A ref cannot be mistaken for a local id (it is not a number) and
stays the same across snapshots, mirror rebuilds and machines: the author id (``team_author``,
``[A-Za-z0-9._@+-]``, no ``:``) and the id the author's store gave the observation.

Contract: ``team:AUTHOR:ID``, ``ID`` a positive integer in ASCII digits. Resolving reads the
team mirror (refreshed first; the last mirror when the lake is down). When one author
publishes from two machines, their local ids may repeat: a ref then names each of those
observations, and all of them are returned (each says its session).

Errors: a malformed ref is ``InvalidRef`` (422, saying the form); an unknown or forgotten one
``NotFound`` (404); no team lake ``TeamNotConfigured`` (409, ``workbench team init``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from workbench.errors import NotFound, WorkbenchError

if TYPE_CHECKING:
    from workbench.settings import Settings
    from workbench.sources.observations import TeamObservation
    from workbench.sources.source import TeamSide

PREFIX = "team:"
MAX_REFS = 100
_REF = re.compile(r"team:([A-Za-z0-9._@+-]{1,128}):([0-9]{1,18})\Z")


class InvalidRef(WorkbenchError):
    """Text that looks like a team ref (or was given as one) but is not ``team:AUTHOR:ID``."""

    status_code = 422
    code = "INVALID_TEAM_REF"


def make(author: str, local_id: int) -> str:
    return f"{PREFIX}{author}:{int(local_id)}"


def is_ref(text: str) -> bool:
    """Does ``text`` claim to be a team ref (whether or not it is a valid one)?"""
    return text.strip().lower().startswith(PREFIX)


def parse(text: str) -> tuple[str, int]:
    """``(author, local id)`` of a ref, or ``InvalidRef`` saying the form."""
    match = _REF.match(text.strip())
    if not match or int(match.group(2)) < 1:
        raise InvalidRef(
            f"{text[:200]!r} is not a team ref; a colleague's observation is cited as "
            "team:AUTHOR:ID, e.g. team:bob@laptop:12 (copy it from a `search --team` hit)"
        )
    return match.group(1), int(match.group(2))


def resolve(settings: Settings, wanted: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The full observations the refs name, in the order asked, and the refs not found.

    Each observation is shaped like a local one (``Observation.model_dump``'s fields) plus
    ``author`` and ``ref``; its ``id`` is the author's local id.
    """
    from workbench.team import mirror

    if len(wanted) > MAX_REFS:
        raise InvalidRef(f"at most {MAX_REFS} team refs at once, got {len(wanted)}")
    keys = [parse(text) for text in wanted]
    freshness = mirror.refresh(settings, max_age_s=settings.team_mirror_max_age_s)
    found, missing = _lookup(settings, keys, wanted, freshness.snapshot)
    if missing and freshness.mode == "recent":
        # Trigger: a ref the mirror lacks, and it did not ask the lake this time.
        # Why: the ref may come from a colleague who published seconds ago.
        # Outcome: ask the lake now, once, and look again.
        freshness = mirror.refresh(settings)
        found, missing = _lookup(settings, keys, wanted, freshness.snapshot)
    return found, missing


def _lookup(
    settings: Settings, keys: list[tuple[str, int]], wanted: list[str], snapshot: int
) -> tuple[list[dict[str, Any]], list[str]]:
    from workbench.team import mirror, mirror_read
    from workbench.team.read import drop_forgotten_own

    found: list[dict[str, Any]] = []
    missing: list[str] = []
    me = settings.team_author_id()
    with mirror.opened(settings) as conn:
        for (author, local_id), text in zip(keys, wanted, strict=True):
            rows = mirror_read.full_observations(conn, author, local_id)
            if author == me:  # what you forgot locally is not shown until publish blanks it
                keyed = [r | {"local_id": r["id"]} for r in rows]
                rows = [
                    {k: v for k, v in r.items() if k != "local_id"}
                    for r in drop_forgotten_own(keyed, me, settings.db_path)
                ]
            if not rows:
                missing.append(text.strip())
            found += [row | {"teamSnapshot": snapshot} for row in rows]
    return found, missing


def resolve_one(team: TeamSide, text: str) -> list[TeamObservation]:
    """The observations one ref names (asked of ``team``), or ``NotFound`` saying how to find
    refs."""
    found, missing = team.get([text])
    if missing:
        raise NotFound(
            f"no live team observation {text.strip()!r} in the team lake (forgotten, or never "
            "published); find refs with `workbench search --team` or /api/search?team=true"
        )
    return found
