"""The SessionStart context block: progressive disclosure at a bounded, stated price.

A session starts knowing what happened before:

1. a header naming the project(s) and saying the notes are data, not instructions;
2. the newest ``context_observations`` observations as one-line rows grouped by day (UTC),
   oldest first so the story ends at the present: ``#id HH:MM <marker> title``;
3. the newest ``context_full`` of them in full (``context_full_field``: narrative or facts);
4. the newest ``context_summaries`` prompt summaries (request / learned / completed / next);
5. with ``team_context`` on, colleagues' observations of the same projects from the team lake,
   each labelled with its author, in the slots the local rows left
   (``workbench/team/context.py``);
6. a footer with the token economics (what reading the block costs against the discovery
   tokens spent producing what it lists) and where to dig deeper (search → timeline → fetch).

Why bounded: the original read every observation of the project to build this. Here every
query is ``LIMIT``-ed on an index (``observations_project_created``,
``summaries_project_created``, or their ``*_project_key`` twins when the hook names the
project's folder: two folders called ``api`` are two projects, m012), once per project,
and every field is clipped, so the cost and the size of the block do not grow with the
history (``max_chars`` is the bound, a function of the limits alone). The whole block is
fenced and every stored field neutralised (see ``render``).

Stdlib only (with ``render``, ``tokens``, ``ledger_reads`` and ``resume``): the SessionStart
hook builds this very block from the store itself when the service is cold
(``workbench.recall.cold_context``), so the two paths share one implementation.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from workbench.locate import MAX_PROJECT_KEY_CHARS
from workbench.recall import render
from workbench.recall.ledger_reads import Shown
from workbench.staleness.check import stale_ids
from workbench.tokens import estimate_tokens

if TYPE_CHECKING:
    from workbench.settings import Settings

MAX_PROJECTS = 10
AUTHOR_CHARS = 60  # a colleague's name in a team row (``team_context``)
PROJECT_CHARS = 80
TITLE_CHARS = 120
NARRATIVE_CHARS = 700
FACTS_SHOWN = 6
FACT_CHARS = 160
SUMMARY_FIELD_CHARS = 220
SESSION_ID_CHARS = 8
SUMMARY_FIELDS = (
    ("request", "Request"),
    ("learned", "Learned"),
    ("completed", "Completed"),
    ("next_steps", "Next steps"),
)
SEARCH_POINTER = (
    "Need more? Search instead of re-reading: MCP `search` (compact index) → `timeline` "
    "(what happened around an id) → `get_observations` (full records, only the ids you need). "
    "HTTP: GET /api/search?query=…&project=…, GET /api/timeline?anchor=<id>, "
    'POST /api/observations/batch {"ids": […]}.'
)


@dataclass(frozen=True)
class ContextLimits:
    """How much the SessionStart block shows (from settings; all bounded by their validators)."""

    observations: int = 50
    full: int = 0
    summaries: int = 10
    full_field: Literal["narrative", "facts"] = "narrative"
    # Leave out observations a later change made stale (``context_skip_stale``); by default
    # they are shown, marked (``STALE_MARK``).
    skip_stale: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextLimits:
        return cls(
            observations=settings.context_observations,
            full=settings.context_full,
            summaries=settings.context_summaries,
            full_field=settings.context_full_field,
            skip_stale=settings.context_skip_stale,
        )


@dataclass(frozen=True)
class TeamRow:
    """One colleague's published observation, as the block shows it (``team_context``)."""

    author: str
    type: str
    title: str
    project: str
    created_at_epoch: int


@dataclass
class Injection:
    """A rendered, fenced block plus what the ledger records about it."""

    text: str
    tokens: int
    items: list[tuple[int, Shown]] = field(default_factory=list)
    discovery_tokens: int = 0


# ----- queries (LIMITed, indexed, once per project) --------------------------------------------


@dataclass(frozen=True)
class Row:
    """What the block shows of one observation (narrative and facts only for the full ones).

    Plain rows, not ``Observation`` models: the block needs six columns of fifty rows, and
    parsing four JSON arrays and validating a model per row cost more than the queries.
    """

    id: int
    type: str
    title: str
    project: str
    created_at_epoch: int
    discovery_tokens: int
    narrative: str = ""
    facts: tuple[str, ...] = ()
    stale: bool = False  # a file it cites changed since (``workbench.staleness``)


# After a stale row's title: the memory may describe code that has changed since.
STALE_MARK = " (stale: a file it cites changed since)"
STALE_LEGEND = "Rows marked stale cite files that changed after they were written: verify first."


@dataclass(frozen=True)
class Digest:
    """What the block shows of one summary."""

    id: int
    content_session_id: str
    project: str
    prompt_number: int
    created_at_epoch: int
    request: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""


@dataclass(frozen=True)
class Since:
    """Rows made at or after ``epoch_ms`` by any session but ``session``: what a resumed
    session has not seen (its own rows are in its conversation already)."""

    epoch_ms: int
    session: str

    @property
    def sql(self) -> str:
        return " AND created_at_epoch >= ? AND coalesce(content_session_id, '') != ?"

    @property
    def params(self) -> list[object]:
        return [self.epoch_ms, self.session]


# Which column names "the project": its short name, or its key (m012; the SessionStart hook's).
ProjectColumn = Literal["project", "project_key"]
_ROW_COLUMNS = "id, type, title, project, created_at_epoch, discovery_tokens"
_DIGEST_COLUMNS = (
    "id, content_session_id, project, prompt_number, created_at_epoch,"
    " request, learned, completed, next_steps"
)


def recent_observations(
    conn: sqlite3.Connection,
    projects: Sequence[str],
    limit: int,
    full: int = 0,
    platform_source: str | None = None,
    column: ProjectColumn = "project",
    since: Since | None = None,
    skip_stale: bool = False,
) -> list[Row]:
    """The newest ``limit`` observations of ``projects``, newest first; the first ``full``
    of them with their narrative and facts. ``platform_source`` keeps one agent's only.
    ``column="project_key"``: ``projects`` are keys (``workbench.locate.project_identity``).
    ``since``: only rows made from then on by other sessions (a resumed session's news).
    Rows whose cited files changed since are marked ``stale`` (``workbench.staleness``: one
    ``stat`` per cited file); ``skip_stale`` leaves them out instead (twice ``limit`` rows are
    read so the block still fills when some are stale).

    One indexed ``LIMIT`` query per project and a merge, because ``project IN (…) ORDER BY
    created_at_epoch`` would read every row of every project to sort them.
    """
    if limit <= 0:
        return []
    platform = " AND platform_source = ?" if platform_source else ""
    extra: list[object] = [platform_source] if platform_source else []
    if since is not None:
        platform += since.sql
        extra += since.params
    found: list[Row] = []
    wanted_rows = limit * 2 if skip_stale else limit
    for project in projects:
        rows = conn.execute(
            f"SELECT {_ROW_COLUMNS} FROM observations WHERE {column} = ?{platform}"
            " ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
            (project, *extra, wanted_rows),
        )
        found.extend(Row(*r) for r in rows)
    found.sort(key=lambda o: (-o.created_at_epoch, -o.id))
    found = found[:wanted_rows]
    stale = stale_ids(conn, [o.id for o in found])
    if skip_stale:
        found = [o for o in found if o.id not in stale]
    found = [replace(o, stale=True) if o.id in stale else o for o in found[:limit]]
    wanted = [o.id for o in found[:full]]
    if wanted:
        details = {
            int(r[0]): (str(r[1]), tuple(str(f) for f in json.loads(r[2])))
            for r in conn.execute(
                "SELECT id, narrative, facts FROM observations"
                f" WHERE id IN ({','.join('?' * len(wanted))})",
                wanted,
            )
        }
        found = [
            replace(o, narrative=details[o.id][0], facts=details[o.id][1]) if o.id in details else o
            for o in found
        ]
    return found


def recent_summaries(
    conn: sqlite3.Connection,
    projects: Sequence[str],
    limit: int,
    platform_source: str | None = None,
    column: ProjectColumn = "project",
    since: Since | None = None,
) -> list[Digest]:
    """The newest ``limit`` summaries of ``projects``, newest first (same plan as above).

    Summaries carry no platform of their own: ``platform_source`` goes through their session.
    """
    if limit <= 0:
        return []
    platform = (
        " AND content_session_id IN"
        " (SELECT content_session_id FROM sessions WHERE platform_source = ?)"
        if platform_source
        else ""
    )
    extra: list[object] = [platform_source] if platform_source else []
    if since is not None:
        platform += since.sql
        extra += since.params
    found: list[Digest] = []
    for project in projects:
        rows = conn.execute(
            f"SELECT {_DIGEST_COLUMNS} FROM session_summaries WHERE {column} = ?{platform}"
            " ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
            (project, *extra, limit),
        )
        found.extend(Digest(*r) for r in rows)
    found.sort(key=lambda s: (-s.created_at_epoch, -s.id))
    return found[:limit]


# ----- the SessionStart block ------------------------------------------------------------------


def header(projects: Sequence[str], subject: str | None = None) -> str:
    names = ", ".join(render.neutral(p, PROJECT_CHARS) for p in projects)
    label = subject or (f"project {names}" if len(projects) == 1 else f"projects {names}")
    return f"# workbench memory · {label} — {render.UNTRUSTED}."


def build_session_context(
    conn: sqlite3.Connection,
    projects: Sequence[str],
    limits: ContextLimits,
    platform_source: str | None = None,
    project_key: str | None = None,
) -> Injection:
    """Query and render the SessionStart block for ``projects`` (no ledger write here).

    Every agent's memories of the projects by default (memory is shared across agents: the
    point is that Claude Code knows what Gemini CLI did); ``platform_source`` keeps one's.
    ``project_key``: the rows of that one project only (``projects`` then only names it in
    the header), so ``clientB/api`` is never shown ``clientA/api``'s memory.
    """
    newest, digests = block_rows(conn, projects, limits, platform_source, project_key)
    return render_session_context(projects, newest, digests, limits)


def block_rows(
    conn: sqlite3.Connection,
    projects: Sequence[str],
    limits: ContextLimits,
    platform_source: str | None = None,
    project_key: str | None = None,
    since: Since | None = None,
) -> tuple[list[Row], list[Digest]]:
    """The observations and summaries a memory block of ``projects`` shows under ``limits``
    (``since``: a resumed session's news only). One query plan for the SessionStart block and
    the resume block (``workbench.recall.resume``)."""
    scope, column = project_scope(projects, project_key)
    newest = recent_observations(
        conn,
        scope,
        limits.observations,
        limits.full,
        platform_source,
        column,
        since,
        skip_stale=limits.skip_stale,
    )
    digests = recent_summaries(conn, scope, limits.summaries, platform_source, column, since)
    return newest, digests


def project_scope(
    projects: Sequence[str], project_key: str | None
) -> tuple[Sequence[str], ProjectColumn]:
    """What to query "the project" by: its key when there is one, else the names.

    With a key, the rows keyed by the bare name count too: their folder is unknown (rows from
    before m012 whose session left no cwd, memories saved by name, imports), and hiding them
    would lose memory on upgrade. A row keyed by another folder's path never matches.
    """
    if project_key:
        key = project_key[:MAX_PROJECT_KEY_CHARS]
        return [key, *(p for p in dict.fromkeys(projects) if p != key)], "project_key"
    return projects, "project"


def render_session_context(
    projects: Sequence[str],
    newest: Sequence[Row],
    digests: Sequence[Digest],
    limits: ContextLimits,
    colleagues: Sequence[TeamRow] = (),
    subject: str | None = None,
) -> Injection:
    """Render the block from rows already fetched (newest first); pure, so it can be bounded.

    ``colleagues``: the rows the block's source selected from the team lake (newest first;
    none from this store alone), shown after the local ones; not in ``items`` (the ledger
    counts local observations by id; team rows have none here). ``subject`` replaces
    "project <name>" in the header (a resumed session's "what is new").
    """
    full = list(newest[: limits.full])
    sections = _sections(projects, newest, full, digests, limits, colleagues)
    if not sections:
        text = render.fence(
            f"{header(projects)}\nNo memories of this project yet: workbench records what "
            "happens as you work, and the next session starts with it here."
        )
        return Injection(text=text, tokens=estimate_tokens(text))
    full_ids = {o.id for o in full}
    discovery = sum(o.discovery_tokens for o in newest)
    body = "\n".join([header(projects, subject), *sections])

    def with_footer(tokens: int) -> str:
        return render.fence(body + "\n\n" + _footer(tokens, len(newest), discovery))

    text, tokens = render.fit_tokens(with_footer, estimate_tokens)
    items: list[tuple[int, Shown]] = [
        (o.id, "full" if o.id in full_ids else "index") for o in newest
    ]
    return Injection(text=text, tokens=tokens, items=items, discovery_tokens=discovery)


def _sections(
    projects: Sequence[str],
    newest: Sequence[Row],
    full: Sequence[Row],
    digests: Sequence[Digest],
    limits: ContextLimits,
    colleagues: Sequence[TeamRow],
) -> list[str]:
    """The block's sections that have rows, in order, as text (none: nothing to show).

    Each section is its heading and one line (or a few) per row; a section without rows is
    left out, so the team's rows are one section like the others, not a special case.
    """
    many = len(projects) > 1
    sections = [
        _recent(newest, many),
        _section(
            f"## In full (newest {len(full)})",
            [line for obs in reversed(full) for line in _in_full(obs, limits.full_field)],
        ),
        _section(
            f"## Recent summaries (newest {len(digests)}, oldest first)",
            [line for summary in reversed(digests) for line in _summary(summary, many)],
        ),
        _section(
            f"## From colleagues (team lake; newest {len(colleagues)}, oldest first; UTC)",
            [_team_row(row, many) for row in reversed(colleagues)],
        ),
    ]
    return [text for text in sections if text]


def _section(heading: str, lines: list[str]) -> str:
    """``heading`` and ``lines`` after a blank line, or "" when there are no lines."""
    return "\n".join(["", heading, *lines]) if lines else ""


def _recent(newest: Sequence[Row], many: bool) -> str:
    """The one-line rows grouped by day (UTC), oldest first, after the legend."""
    if not newest:
        return ""
    lines = ["Legend: " + render.legend([o.type for o in newest])]
    if any(o.stale for o in newest):
        lines.append(STALE_LEGEND)
    lines += ["", f"## Recent observations (newest {len(newest)}, oldest first; UTC)"]
    current_day = ""
    for obs in reversed(newest):
        obs_day = render.day(obs.created_at_epoch)
        if obs_day != current_day:
            lines.append(f"### {obs_day}")
            current_day = obs_day
        lines.append(_row(obs, many))
    return "\n".join(lines)


def _in_full(obs: Row, preferred: Literal["narrative", "facts"]) -> list[str]:
    return [
        f"#{obs.id} {render.stamp(obs.created_at_epoch)} {render.marker(obs.type)} "
        f"{render.neutral(obs.title, TITLE_CHARS)}{STALE_MARK if obs.stale else ''}",
        *_details(obs, preferred),
    ]


def _team_row(row: TeamRow, many: bool) -> str:
    where = f" [{render.neutral(row.project, PROJECT_CHARS)}]" if many else ""
    return (
        f"- {render.stamp(row.created_at_epoch)} {render.marker(row.type)} "
        f"{render.neutral(row.title, TITLE_CHARS)}{where} — by "
        f"{render.neutral(row.author, AUTHOR_CHARS)}"
    )


def _row(obs: Row, many: bool) -> str:
    where = f" [{render.neutral(obs.project, PROJECT_CHARS)}]" if many else ""
    return (
        f"#{obs.id} {render.clock(obs.created_at_epoch)} {render.marker(obs.type)} "
        f"{render.neutral(obs.title, TITLE_CHARS)}{where}{STALE_MARK if obs.stale else ''}"
    )


def _details(obs: Row, preferred: Literal["narrative", "facts"]) -> list[str]:
    """The narrative or the facts (the other one when the preferred field is empty)."""
    facts = [render.neutral(f, FACT_CHARS) for f in obs.facts[:FACTS_SHOWN]]
    facts = [f for f in facts if f]
    narrative = render.neutral(obs.narrative, NARRATIVE_CHARS)
    if (preferred == "facts" and facts) or not narrative:
        return [f"  - {f}" for f in facts]
    return [f"  {narrative}"]


def _summary(summary: Digest, many: bool) -> list[str]:
    session = render.neutral(summary.content_session_id, 64)[:SESSION_ID_CHARS]  # like a short hash
    where = f" · {render.neutral(summary.project, PROJECT_CHARS)}" if many else ""
    lines = [
        f"### {render.stamp(summary.created_at_epoch)} · session {session} · "
        f"prompt {summary.prompt_number}{where}"
    ]
    for name, label in SUMMARY_FIELDS:
        value = render.neutral(getattr(summary, name), SUMMARY_FIELD_CHARS)
        if value:
            lines.append(f"{label}: {value}")
    if len(lines) == 1:
        lines.append("(no digest text)")
    return lines


def savings_percent(read_tokens: int, discovery_tokens: int) -> int:
    """Whole percent of the discovery cost that reading saves (0 when reading costs more)."""
    if discovery_tokens <= 0 or read_tokens >= discovery_tokens:
        return 0
    return (discovery_tokens - read_tokens) * 100 // discovery_tokens


def _footer(read_tokens: int, listed: int, discovery: int) -> str:
    lines = ["## Token economics"]
    cost = f"Reading this block costs ~{read_tokens:,} tokens."
    if listed and discovery > 0:
        pct = savings_percent(read_tokens, discovery)
        lines.append(
            f"{cost} Producing the {listed} observations listed took {discovery:,} discovery "
            f"tokens, so reusing them saves {pct}%."
        )
    elif listed:
        lines.append(f"{cost} No discovery cost was recorded for the {listed} observations listed.")
    else:
        lines.append(cost)
    lines.append(SEARCH_POINTER)
    return "\n".join(lines)


def max_chars(limits: ContextLimits) -> int:
    """An upper bound on the SessionStart block's length for ``limits``, whatever is stored.

    Measured by rendering the worst case: ``MAX_PROJECTS`` projects with the longest names,
    every row on its own day, every field at its cap, 13-digit ids and token counts, every
    type in the legend. A test checks real blocks stay under it however long the history.
    """
    projects = [f"{chr(97 + i)}" * PROJECT_CHARS for i in range(MAX_PROJECTS)]
    types = list(render.TYPE_MARKERS)  # every observation type (a test checks they agree)
    big = 10**12
    long_text = "x" * (NARRATIVE_CHARS * 2)
    newest = [
        Row(
            id=big - i,
            type=types[i % len(types)],
            title=long_text,
            project=projects[0],
            created_at_epoch=(20_000 - i) * 86_400_000,  # one day apart, four-digit years
            discovery_tokens=big,
            narrative=long_text,
            facts=(long_text,) * FACTS_SHOWN,
            stale=True,
        )
        for i in range(limits.observations)
    ]
    digests = [
        Digest(
            id=big - i,
            content_session_id=long_text,
            project=projects[0],
            prompt_number=big,
            created_at_epoch=(20_000 - i) * 86_400_000,
            request=long_text,
            learned=long_text,
            completed=long_text,
            next_steps=long_text,
        )
        for i in range(limits.summaries)
    ]
    worst = 0
    for field_choice in ("narrative", "facts"):
        wide = ContextLimits(limits.observations, limits.full, limits.summaries, field_choice)
        worst = max(worst, len(render_session_context(projects, newest, digests, wide).text))
    # Slack for what the synthetic rows cannot all be at once: every row with the widest
    # marker *and* every type in the legend.
    slack = len(render.legend(list(render.TYPE_MARKERS))) + limits.observations
    return worst + slack
