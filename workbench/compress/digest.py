"""The offline per-prompt digest: a summary assembled from what the prompt's observations say.

Deterministic: observations are taken in id order, so the same request gives the same
summary. Fields:
- ``request``: the user prompt, whitespace collapsed, at most 500 characters.
- ``investigated``: titles of ``discovery`` observations (reads, searches, runs).
- ``completed``: titles of changes, features, refactors, decisions and fixed bugs; an
  offline "Tests failing"/"reports errors" observation is a finding, not work done, so it
  goes to ``learned`` instead.
- ``learned``: the last assistant message's first two sentences, then facts of bugfix and
  discovery observations (failures and first errors first).
- ``next_steps``: lines of the last assistant message that say next/TODO/remaining/follow-up,
  and the bullets under a "Next steps:" heading; empty when there are none.
- ``notes``: security observations, which deserve a second look.
- ``files_read`` / ``files_edited``: the union of the observations' files, first seen first.
"""

from __future__ import annotations

import re

from workbench.compress.rules.text import dedupe, first_sentences, short
from workbench.models import Observation, SummaryDraft, SummaryRequest

FINDING_PREFIXES = ("Tests failing", "Test run", "Commit failed")
_DONE_TYPES = frozenset({"change", "feature", "refactor", "decision", "bugfix"})
_NEXT_LINE = re.compile(
    r"\b(?:next|todo|to-do|remaining|follow[- ]up|still (?:need|to)|left to do)\b", re.IGNORECASE
)
_NEXT_HEADING = re.compile(r"^\W*(?:next steps?|todo|remaining|follow[- ]ups?)\W*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_LIST_LIMIT = 8
_UNINFORMATIVE = 4


def summarize_offline(request: SummaryRequest) -> SummaryDraft:
    """A deterministic ``SummaryDraft`` for one prompt."""
    observations = _of_prompt(request)
    findings = [o for o in observations if _is_finding(o)]
    done = [o for o in observations if o.type in _DONE_TYPES and not _is_finding(o)]
    looked = [o for o in observations if o.type == "discovery"]
    flagged = [o for o in observations if o.type.startswith("security")]
    return SummaryDraft(
        request=short(request.user_prompt, 500),
        investigated=_titles(looked),
        learned=_learned(request.last_assistant_message, findings + looked),
        completed=_titles(done),
        next_steps=next_steps(request.last_assistant_message),
        notes=_titles(flagged),
        files_read=dedupe(f for o in observations for f in o.files_read),
        files_edited=dedupe(f for o in observations for f in o.files_modified),
    )


def next_steps(message: str) -> str:
    """Lines of a message that name what is left to do, joined with ``; ``."""
    found: list[str] = []
    under_heading = False
    for raw in message.splitlines():
        line = raw.strip()
        if not line:
            under_heading = False
            continue
        if _NEXT_HEADING.match(line):
            under_heading = True
            continue
        if (under_heading and _BULLET.match(line)) or _NEXT_LINE.search(line):
            found.append(short(_BULLET.sub("", line).strip("*_ "), 200))
    return "; ".join(dedupe(found)[:5])


def _of_prompt(request: SummaryRequest) -> list[Observation]:
    """The request's observations of this prompt (unnumbered ones kept), in id order."""
    wanted = request.prompt_number
    kept = [o for o in request.observations if not wanted or o.prompt_number in (wanted, 0)]
    return sorted(kept, key=lambda o: o.id)


def _is_finding(observation: Observation) -> bool:
    return observation.type == "bugfix" and (
        observation.title.startswith(FINDING_PREFIXES) or " reports errors" in observation.title
    )


def _titles(observations: list[Observation]) -> str:
    return "; ".join(dedupe(short(o.title, 120) for o in observations)[:_LIST_LIMIT])


def _learned(message: str, observations: list[Observation]) -> str:
    facts: list[str] = []
    for observation in observations:
        ranked = sorted((_fact_rank(f), f) for f in observation.facts)
        facts.extend(short(f, 160) for rank, f in ranked[:2] if rank < _UNINFORMATIVE)
    parts = [first_sentences(message, 2, 300)] if message.strip() else []
    if facts:
        parts.append("; ".join(dedupe(facts)[:6]))
    return " ".join(p for p in parts if p)


def _fact_rank(fact: str) -> int:
    """First errors, then test counts, then failing tests, then what code defines; the rest
    (line counts, exit codes) is not worth repeating in a summary."""
    lowered = fact.lower()
    if lowered.startswith(("first error", "error:")):
        return 0
    if " failed" in lowered or " passed" in lowered:
        return 1
    if lowered.startswith("failed:"):
        return 2
    if lowered.startswith(("defines:", "answer:", "result:")) or "matching" in lowered:
        return 3
    return _UNINFORMATIVE
