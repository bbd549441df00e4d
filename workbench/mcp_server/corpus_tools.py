"""The knowledge tools (issue 4): build_corpus, list_corpora, prime_corpus, query_corpus,
rebuild_corpus, reprime_corpus.

Each is a thin call to the service's corpus API (``/api/corpus…``): the service validates the
filter, holds the embedding model for ``query`` corpora and keeps the agent's conversations,
so a follow-up from an MCP client continues the same conversation as one from the CLI. A
corpus name is checked here as well, before it becomes part of a URL path (``a/b`` would
otherwise reach a different route), with the same rule and message as the service.

No ``from __future__ import annotations``: the SDK evaluates these signatures to build the
tool schemas (see ``recall_tools``).
"""

import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from workbench.errors import WorkbenchError
from workbench.mcp_server.backend import ServiceBackend
from workbench.models import OBSERVATION_TYPES

ObsType = Literal[OBSERVATION_TYPES]  # type: ignore[valid-type]
Name = Annotated[
    str,
    Field(
        description="Corpus name: ASCII letters, digits, '.', '_' or '-' (e.g. hooks-lifecycle).",
        min_length=1,
        max_length=200,
    ),
]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
# Asking the agent changes only its conversation; with a key it calls the Anthropic API.
ASKS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)


def as_text(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def checked(name: str) -> str:
    """``name`` if valid, else a ``ToolError`` carrying the naming rule."""
    from workbench.knowledge.corpus import validate_name

    try:
        return validate_name(name)
    except WorkbenchError as exc:
        raise ToolError(exc.message) from None


def _metadata(body: dict[str, Any]) -> dict[str, Any]:
    """A corpus's metadata without the long system prompt (the model does not need it)."""
    return {k: v for k, v in body.items() if k != "system_prompt"}


def register(server: MCPServer, client: ServiceBackend) -> None:
    """Add the six corpus tools to ``server``; they call the service through ``client``."""

    def build_corpus(
        name: Name,
        description: Annotated[
            str | None, Field(description="What the corpus is about.", max_length=2000)
        ] = None,
        project: Annotated[str | None, Field(description="Only this project.")] = None,
        types: Annotated[
            list[ObsType] | None, Field(description="Only these observation types.")
        ] = None,
        concepts: Annotated[
            list[str] | None, Field(description="Only observations tagged with any of these.")
        ] = None,
        files: Annotated[
            list[str] | None,
            Field(description="Only observations that read or modified these path prefixes."),
        ] = None,
        query: Annotated[
            str | None, Field(description="Hybrid search words; the most relevant are kept.")
        ] = None,
        dateStart: Annotated[str | None, Field(description="ISO date or time, inclusive.")] = None,
        dateEnd: Annotated[str | None, Field(description="ISO date or time, inclusive.")] = None,
        platformSource: Annotated[
            str | None,
            Field(description="Only this agent platform (claude-code, gemini-cli, codex-cli…)."),
        ] = None,
        limit: Annotated[
            int | None, Field(ge=1, le=10_000, description="At most this many (default 500).")
        ] = None,
        team: Annotated[
            bool,
            Field(
                description="Also colleagues' published observations from the team lake "
                "(needs `workbench team init`)."
            ),
        ] = False,
    ) -> str:
        body: dict[str, Any] = {"name": checked(name)}
        optional = {
            "description": description,
            "project": project,
            "types": types,
            "concepts": concepts,
            "files": files,
            "query": query,
            "dateStart": dateStart,
            "dateEnd": dateEnd,
            "platformSource": platformSource,
            "limit": limit,
            "team": team or None,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        return as_text(_metadata(client.post("/api/corpus", body)))

    def list_corpora() -> str:
        listed = client.get("/api/corpus")
        return as_text({**listed, "corpora": [_metadata(c) for c in listed.get("corpora", [])]})

    def prime_corpus(name: Name) -> str:
        return as_text(client.post(f"/api/corpus/{checked(name)}/prime", {}))

    def query_corpus(
        name: Name,
        question: Annotated[
            str, Field(min_length=1, max_length=20_000, description="The question to ask.")
        ],
    ) -> str:
        return as_text(client.post(f"/api/corpus/{checked(name)}/query", {"question": question}))

    def rebuild_corpus(name: Name) -> str:
        return as_text(_metadata(client.post(f"/api/corpus/{checked(name)}/rebuild", {})))

    def reprime_corpus(name: Name) -> str:
        return as_text(client.post(f"/api/corpus/{checked(name)}/reprime", {}))

    tools: list[tuple[Any, str, ToolAnnotations]] = [
        (
            build_corpus,
            "Build (or replace) a knowledge corpus: a named, frozen slice of workbench memory "
            "chosen by filters (project, types, concepts, files, dateStart/dateEnd) and/or a "
            "search query, oldest first, at most `limit` (default 500). Returns its stats "
            "(count, token estimate, date range, types). Then prime_corpus and query_corpus.",
            WRITES,
        ),
        (
            list_corpora,
            "List knowledge corpora with their stats and whether an agent conversation is primed.",
            READ_ONLY,
        ),
        (
            prime_corpus,
            "Start the knowledge agent's conversation on a corpus (the corpus is loaded once; "
            "an intact conversation is kept). Returns {session_id, name}.",
            WRITES,
        ),
        (
            query_corpus,
            "Ask the knowledge agent of a corpus a question; follow-ups build on earlier "
            "questions. Returns {answer, citations (observation ids), session_id, usage, "
            "agent}. Primes automatically if needed. Without an API key the answer is "
            "extractive (quotes of the best-matching observations), and says so.",
            ASKS,
        ),
        (
            rebuild_corpus,
            "Re-run a corpus's stored filter to pull in new observations. Clears the agent "
            "conversation (the next query starts a fresh one).",
            WRITES,
        ),
        (
            reprime_corpus,
            "Start a fresh agent conversation on a corpus, forgetting earlier questions.",
            WRITES,
        ),
    ]
    for fn, description, annotations in tools:
        server.add_tool(
            fn, description=description, annotations=annotations, structured_output=False
        )
