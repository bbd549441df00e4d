"""The recall tools (issue 3): search, timeline, get_observations, save_memory, workflow.

Each tool is a thin call to the service's HTTP contract (``GET /api/search``, ``GET
/api/timeline``, ``POST /api/observations/batch``, ``POST /api/memory/save``); validation that
the service owns (no query and no filter, an unknown anchor…) stays there, and its message
reaches the model as the tool error. The JSON schemas come from the signatures below, so the
bounds and enums here are what the client sees; ``search``'s is built from ``SearchQuery``
(``query_schema``), the same model ``/api/search`` and ``workbench search`` take.

No ``from __future__ import annotations`` here: the SDK evaluates these signatures to build
the schemas, and plain annotations keep that evaluation trivially correct.
"""

import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from workbench.mcp_server.backend import ServiceBackend
from workbench.mcp_server.front import current_identity, current_project
from workbench.mcp_server.query_schema import (
    model_arguments,
    model_parameters,
    with_notices,
    with_signature,
)
from workbench.recall.search_query import SearchQuery

# The arguments ``search`` took before issue 13 (deprecated; removed in the next release).
SEARCH_OLD_NAMES = ["obs_type", "type", "dateStart", "dateEnd", "platformSource", "orderBy"]
Project = Annotated[
    str | None, Field(description="Only this project (a git root's folder name).", max_length=200)
]
Limit = Annotated[int, Field(ge=1, le=100)]

TOOL_HINTS = {
    "Next: ": (
        "Next: timeline(anchor=<id> or 'S<id>') shows what happened around a hit; "
        "get_observations(ids=[<id>, ...]) returns full observations - fetch only the ids you "
        "need."
    ),
    "Full observations: ": (
        "Full observations: get_observations(ids=[<id>, ...]) for the ids you need."
    ),
}
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# Dropped from fetched observations: bookkeeping that costs tokens and tells the agent nothing.
NOISE_FIELDS = {"content_hash", "event_id"}

WORKFLOW = """\
How to recall from workbench memory (3 layers; each step costs more tokens than the last):

1. search(query=..., and/or filters) -> a compact index: one line per hit with its id, time,
   type, title and a token estimate (~50-100 tokens per hit); in hybrid mode, [fts],
   [vector] or [fts+vector] says which rankers found it. Start here. Narrow with project,
   types, concepts, files, since/until; page with limit/offset; order_by date_desc for
   "what happened recently".
2. timeline(anchor=<id from the index>) -> what happened just before and after that hit
   (observations, prompts and session summaries in time order). Use it to see whether a hit
   is the one you need and what surrounded it, still cheaply. timeline(query=...) anchors on
   the best hit for you.
3. get_observations(ids=[123, ...]) -> the full records (narrative, facts, files) of only the
   ids you picked (#123 in the index is id 123). A full observation costs several hundred
   tokens, so fetching 20 "just in case" can cost more than the whole search; filter first,
   then fetch 1-5.

Why: your context window is the budget. The index lets you skim hundreds of memories for the
price of reading a few; full records are for the handful that matter.

Also: save_memory(text, title?) stores a note you want future sessions to find (a decision,
a gotcha, a how-to). It is searchable at once.
"""


def as_text(body: Any) -> str:
    """The service's answer as tool text: text stays text, JSON is dumped compactly."""
    if isinstance(body, str):
        return body
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def for_tools(text: str) -> str:
    """The service's compact text with its closing hint in tool terms instead of HTTP ones.

    The index and timeline end with a "Next: GET /api/timeline…" style line written for HTTP
    callers; an agent here should call the tools. Anything else passes through unchanged.
    """
    body, _, last = text.rstrip("\n").rpartition("\n")
    for prefix, hint in TOOL_HINTS.items():
        if last.startswith(prefix):
            return f"{body}\n{hint}\n"
    return text


def split_ids(ids: list[int | str]) -> tuple[list[int], list[str]]:
    """Local ids (``12``, ``"#12"``) and team refs (``team:AUTHOR:ID``), or a ``ToolError``."""
    from mcp.server.mcpserver.exceptions import ToolError

    numbers: list[int] = []
    team_refs: list[str] = []
    for item in ids:
        if isinstance(item, int):
            numbers.append(item)
            continue
        text = item.strip().removeprefix("#")
        if text.lower().startswith("team:"):
            team_refs.append(text)
        elif text.isascii() and text.isdigit() and int(text) >= 1:
            numbers.append(int(text))
        else:
            raise ToolError(
                f"ids: {item[:100]!r} is not an observation id (an integer like 123 from "
                "search) nor a colleague's team ref (team:AUTHOR:ID from a team search)"
            )
    return numbers, team_refs


def trim(obs: dict[str, Any]) -> dict[str, Any]:
    """An observation without the fields an agent never needs, nor empty ones."""
    return {k: v for k, v in obs.items() if k not in NOISE_FIELDS and v not in (None, "", [])}


def register(server: MCPServer, client: ServiceBackend) -> None:
    """Add the five recall tools to ``server``; they call the service through ``client``."""
    here = current_project()  # named in save_memory's schema (annotations run at def time)

    def search(**arguments: Any) -> str:
        wanted, _, notices = model_arguments(SearchQuery, arguments)
        return with_notices(for_tools(client.get("/api/search", **wanted.wire())), notices)

    with_signature(search, model_parameters(SearchQuery, SEARCH_OLD_NAMES))

    def timeline(
        anchor: Annotated[
            int | str | None,
            Field(
                description=(
                    "An observation id from search, 'S<id>' for a session summary, or an ISO "
                    "timestamp. Give anchor or query, not both."
                )
            ),
        ] = None,
        query: Annotated[
            str | None, Field(description="Anchor on the best search hit for this text.")
        ] = None,
        depth_before: Annotated[
            int | None, Field(ge=0, le=50, description="Items before the anchor.")
        ] = None,
        depth_after: Annotated[
            int | None, Field(ge=0, le=50, description="Items after the anchor.")
        ] = None,
        project: Project = None,
        team: Annotated[
            bool,
            Field(
                description="Also read the team lake (colleagues' published memories, marked "
                "@author); needs `workbench team init`."
            ),
        ] = False,
    ) -> str:
        if isinstance(anchor, str):
            anchor = anchor.strip().removeprefix("#")  # "#123" / "#S12" as the index prints them
        return for_tools(
            client.get(
                "/api/timeline",
                format="text",
                anchor=anchor,
                query=query,
                depth_before=depth_before,
                depth_after=depth_after,
                project=project,
                team=team or None,
            )
        )

    def get_observations(
        ids: Annotated[
            list[Annotated[int, Field(ge=1)] | Annotated[str, Field(max_length=300)]],
            Field(
                min_length=1,
                max_length=100,
                description="Observation ids from search (123), or a colleague's team ref "
                "from a team search (team:AUTHOR:ID).",
            ),
        ],
        orderBy: Annotated[
            Literal["date_desc", "date_asc", "id_asc", "id_desc"] | None,
            Field(description="Default date_desc."),
        ] = None,
        limit: Annotated[Limit | None, Field(description="At most this many.")] = None,
        project: Project = None,
    ) -> str:
        from workbench.mcp_server.fetch_sources import ServiceIds, ServiceRefs
        from workbench.sources.merged import merge_get
        from workbench.sources.source import GetAsk

        numbers, team_refs = split_ids(ids)
        ask = GetAsk(
            ids=tuple(numbers),
            refs=tuple(team_refs),
            order_by=orderBy or "date_desc",
            limit=limit,
            project=project,
        )
        fetched = merge_get(ServiceIds(client), ServiceRefs(client), ask)
        answer: dict[str, Any] = {
            "observations": [trim(o.model_dump(by_alias=True)) for o in fetched.observations]
        }
        missing: list[Any] = [*fetched.missing_ids, *fetched.missing_refs]
        if missing:
            answer["missing"] = missing
        return as_text(answer)

    def save_memory(
        text: Annotated[
            str, Field(min_length=1, max_length=100_000, description="What to remember.")
        ],
        title: Annotated[
            str | None, Field(max_length=300, description="Short title (default: first line).")
        ] = None,
        project: Annotated[
            str | None,
            Field(max_length=200, description=f"Default: this session's project ({here})."),
        ] = None,
    ) -> str:
        here_now = current_identity()
        chosen = project or here_now.name
        body: dict[str, Any] = {"text": text, "title": title, "project": chosen}
        if chosen == here_now.name:
            # Trigger: this session's project (by default or by its name). / Why: the name
            # alone is shared by every folder called so. / Outcome: saved in this folder's
            # memory, shown to its next sessions (and to no other folder of that name).
            body["projectKey"] = here_now.key
        if client.platform_source:  # the agent that launched this server (--platform)
            body["platformSource"] = client.platform_source
        saved = client.post("/api/memory/save", body)
        return as_text({"id": saved.get("id"), "project": chosen, "status": saved.get("status")})

    def workflow() -> str:
        return WORKFLOW

    tools: list[tuple[Any, str, ToolAnnotations]] = [
        (
            search,
            "Search workbench memory (earlier sessions' observations, prompts and session "
            "summaries). Returns a compact index, one line per hit (id, time, type, title, "
            "~tokens; in hybrid mode [fts], [vector] or [fts+vector]: which rankers found "
            "it), about 50-100 tokens per hit, not the full records. Layer 1 of 3: then "
            "use timeline around a promising id and get_observations for the few ids you "
            "need. Give a query, filters, or both.",
            READ_ONLY,
        ),
        (
            timeline,
            "Layer 2 of 3: what happened around one memory, in time order (observations, "
            "prompts and session summaries before and after it, the anchor marked). Anchor on "
            "an id from search (or 'S<id>' for a summary, or an ISO time), or pass query to "
            "anchor on the best hit. Cheap context to decide which ids to fetch in full.",
            READ_ONLY,
        ),
        (
            get_observations,
            "Layer 3 of 3: the full observations (narrative, facts, concepts, files) for the "
            "given ids (#123 in the index is id 123; a colleague's hit in a team search is "
            "its team:AUTHOR:ID ref), as JSON: {observations, missing}. "
            "Several hundred tokens each: fetch only the ids you chose from search/timeline, "
            "not every hit.",
            READ_ONLY,
        ),
        (
            save_memory,
            "Save a memory for future sessions (a decision, a gotcha, a how-to), stored at "
            "once and searchable. Returns the new observation id as JSON.",
            ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
        ),
        (
            workflow,
            "How to use workbench memory without flooding your context: 1) search for a "
            "compact index (~50-100 tokens per hit), 2) timeline around interesting hits, "
            "3) get_observations only for the ids you need (full records cost several hundred "
            "tokens each). Call it to get the full guidance.",
            READ_ONLY,
        ),
    ]
    for fn, description, annotations in tools:
        server.add_tool(
            fn, description=description, annotations=annotations, structured_output=False
        )
