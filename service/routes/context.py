"""Context injection: the blocks the hooks put in front of the agent, and file lookups.

- ``GET /api/context/inject?projects=a,b`` (or ``project=a``) → text/plain, the SessionStart
  block (``workbench.recall.context``). Always fenced; an empty project gets a welcome line.
  Every agent's memories of the project by default (memory is shared across agents);
  ``platform_source=gemini-cli`` (old spelling ``platformSource``) keeps one platform's, and
  a platform no adapter sends is a 422 ``UNKNOWN_PLATFORM`` listing the known ones. With
  ``team_context`` on, colleagues' rows from the team lake follow the local ones
  (``workbench.team.context``: bounded by ``team_context_timeout_s``, the local block
  unchanged when the lake fails).
  ``project_key=<the folder's key>`` (what the hooks send: ``workbench.locate.
  project_identity``) shows that one project's rows only, under the name given: two folders
  named ``api`` are two projects. Without it, every project of that name (older clients).
  ``source=<the agent's SessionStart source>`` (``workbench.recall.resume``): ``resume`` with
  the ``contentSessionId`` of a session given a block before answers only what other
  sessions added since (an empty body, and no ledger row, when nothing is new: the resumed
  conversation still holds the earlier block); startup, clear, compact, none, or any other
  text answer the full block.
- ``GET /api/context/prompt?query=&project=&project_key=`` → text/plain, memories related to
  a prompt (``project_key`` scopes them as above), or an empty body when ``prompt_injection``
  is off, the prompt is short, or no vector ranker runs.
- ``GET /api/context/file?path=&cwd=&mtime=`` → text/plain, the file-history block before a
  Read, or an empty body (no history, or the file changed after it: ``mtime`` in epoch ms).
  A cwd-relative path matches in the cwd's project only: its key, not its name.

The three ``/api/context/*`` routes take ``contentSessionId`` and record what they returned
in the injection ledger (``workbench.recall.ledger``), here, so every client (the hooks, the
CLI) is counted the same way: every SessionStart block (a welcome too, with no items), and
each prompt or file block that showed something (an empty reply injected nothing). They
are GETs that append a ledger row: the row describes the read, and changes nothing a later
GET returns. A ledger write that fails is logged and the text still returned: the context
matters more to the session than its accounting.
``X-Workbench-Tokens`` carries the block's estimated tokens.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import PlainTextResponse

from service.deprecation import mark_deprecated, one_spelling
from service.deps import RuntimeDep
from service.runtime import Runtime
from workbench.bounds import EPOCH_MS_MAX
from workbench.errors import InvalidInput, StoreUnavailable
from workbench.locate import MAX_PROJECT_KEY_CHARS, project_from_cwd
from workbench.platform_filter import check_platform
from workbench.recall import file_history, ledger
from workbench.recall.context import (
    MAX_PROJECTS,
    ContextLimits,
    Injection,
    block_rows,
    render_session_context,
)
from workbench.recall.filters import coerce_list
from workbench.recall.ledger_reads import InjectionKind
from workbench.recall.prompt_context import MAX_QUERY_CHARS, related, render_prompt_context
from workbench.recall.resume import MAX_SOURCE_CHARS, build_resume_context, resumed_since
from workbench.store.connection import write_wait
from workbench.team import context as team_context

log = logging.getLogger("workbench.service")
router = APIRouter(prefix="/api", tags=["context"])

SessionParam = Annotated[str | None, Query(alias="contentSessionId", max_length=200)]
ProjectParam = Annotated[str | None, Query(max_length=200)]
ProjectKeyParam = Annotated[
    str | None,
    Query(
        max_length=MAX_PROJECT_KEY_CHARS,
        description="the project's key (workbench.locate.project_identity): this folder only",
    ),
]
PathParam = Annotated[str, Query(min_length=1, max_length=4096)]
LEDGER_WRITE_WAIT_S = 0.4  # as the hook routes: well inside the hooks' context timeouts
CwdParam = Annotated[str, Query(max_length=4096)]
PlatformParam = Annotated[
    str | None, Query(max_length=200, description="one agent platform, e.g. gemini-cli")
]


def parse_projects(projects: str | None, project: str | None) -> list[str]:
    """``projects=a,b`` and/or ``project=a`` → a list; neither → a 400 that shows the form."""
    names = coerce_list([v for v in (projects, project) if v], "projects")
    if not names:
        raise InvalidInput(
            "give the project to build context for, e.g. /api/context/inject?projects=acme-api "
            "(several: projects=a,b)"
        )
    if len(names) > MAX_PROJECTS:
        raise InvalidInput(f"projects takes at most {MAX_PROJECTS} names, got {len(names)}")
    return names


def _record(
    runtime: Runtime,
    injection: Injection,
    kind: InjectionKind,
    session: str | None,
    project: str | None,
) -> None:
    try:
        # The hooks wait for this answer: a lock held elsewhere costs the ledger row (derived
        # analytics), never the context itself.
        with write_wait(LEDGER_WRITE_WAIT_S):
            ledger.record_injection(
                runtime.store.conn,
                kind=kind,
                tokens=injection.tokens,
                items=injection.items,
                content_session_id=session,
                project=project,
            )
    except StoreUnavailable as exc:
        log.warning("%s injection not recorded in the ledger: %s", kind, exc.message)
    except sqlite3.Error:
        log.exception("could not record a %s injection in the ledger", kind)


def _text(injection: Injection) -> PlainTextResponse:
    return PlainTextResponse(injection.text, headers={"X-Workbench-Tokens": str(injection.tokens)})


@router.get("/context/inject", response_class=PlainTextResponse)
def inject(
    runtime: RuntimeDep,
    session: SessionParam = None,
    projects: Annotated[str | None, Query(max_length=2100)] = None,
    project: ProjectParam = None,
    project_key: ProjectKeyParam = None,
    platform_source: PlatformParam = None,
    platformSource: Annotated[
        str | None,
        Query(max_length=200, description="deprecated: use platform_source", deprecated=True),
    ] = None,
    source: Annotated[
        str | None,
        Query(
            max_length=MAX_SOURCE_CHARS,
            description="why the session starts: startup, resume, clear, compact (SessionStart)",
        ),
    ] = None,
) -> PlainTextResponse:
    names = parse_projects(projects, project)
    if project_key and len(names) > 1:
        raise InvalidInput(
            "project_key names one project: send it with one name (projects=api&project_key=…),"
            " or leave it out to build context for several projects by name"
        )
    sent = {"platform_source": platform_source, "platformSource": platformSource}
    values, _, notices = one_spelling(sent, {"platform_source"})
    platform = check_platform(values.get("platform_source"))
    limits = ContextLimits.from_settings(runtime.settings)
    since = resumed_since(runtime.store.conn, session, source)
    if session and since is not None:
        injection = build_resume_context(
            runtime.store.conn, names, limits, session, since, platform, project_key
        )
    else:
        injection = _block(runtime, names, limits, platform, project_key)
    if injection.text:  # a resume with nothing new injects nothing: no ledger row
        _record(runtime, injection, "session_start", session, ",".join(names))
    answer = _text(injection)
    mark_deprecated(answer, notices)
    return answer


def _block(
    runtime: Runtime,
    names: list[str],
    limits: ContextLimits,
    platform: str | None,
    project_key: str | None,
) -> Injection:
    """This store's rows, then colleagues' in the slots they left (none unless
    ``team_context`` is on: ``team_context.fetch``, bounded, never raises).

    Local rows by key (this folder); the lake's by name: team rows carry the short name, the
    one thing colleagues' machines share (``workbench/team``).
    """
    conn = runtime.store.conn
    newest, digests = block_rows(conn, names, limits, platform, project_key)
    colleagues = team_context.fetch(
        runtime.settings,
        conn,
        names,
        team_context.slots(limits.observations, len(newest)),
        [o.title for o in newest],
    )
    return render_session_context(names, newest, digests, limits, colleagues)


@router.get("/context/prompt", response_class=PlainTextResponse)
def prompt(
    runtime: RuntimeDep,
    session: SessionParam = None,
    query: Annotated[str, Query(max_length=4 * MAX_QUERY_CHARS)] = "",
    project: ProjectParam = None,
    project_key: ProjectKeyParam = None,
) -> PlainTextResponse:
    settings = runtime.settings
    if not settings.prompt_injection:
        return _text(Injection(text="", tokens=0))
    matches = related(
        runtime.store.conn,
        runtime.vector_ranker,
        query,
        project=project,
        content_session_id=session,
        project_key=project_key,
        count=settings.prompt_injection_count,
        min_chars=settings.prompt_injection_min_chars,
        min_similarity=settings.prompt_injection_min_similarity,
    )
    injection = render_prompt_context(matches)
    if injection.items:
        _record(runtime, injection, "prompt", session, project)
    return _text(injection)


@router.get("/context/file", response_class=PlainTextResponse)
def file_context(
    runtime: RuntimeDep,
    path: PathParam,
    session: SessionParam = None,
    cwd: CwdParam = "",
    mtime: Annotated[
        int | None, Query(ge=0, le=EPOCH_MS_MAX, description="file mtime, epoch ms")
    ] = None,
) -> PlainTextResponse:
    injection = file_history.file_context(
        runtime.store.conn,
        path,
        cwd,
        mtime_ms=mtime,
        max_items=runtime.settings.file_context_max,
        skip_stale=runtime.settings.context_skip_stale,
    )
    if injection.items:
        project = project_from_cwd(cwd) if cwd else None
        _record(runtime, injection, "file", session, project)
    return _text(injection)
