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

import inspect
import json
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from workbench.errors import WorkbenchError
from workbench.knowledge.corpus_filter import CorpusFilter
from workbench.mcp_server.backend import ServiceBackend
from workbench.mcp_server.query_schema import (
    model_arguments,
    model_parameters,
    with_signature,
)

# The arguments ``build_corpus`` took before issue 13 (deprecated; removed in the next release).
CORPUS_OLD_NAMES = ["dateStart", "dateEnd", "platformSource"]
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

    def build_corpus(**arguments: Any) -> str:
        flt, extra, notices = model_arguments(CorpusFilter, arguments, ("name", "description"))
        body: dict[str, Any] = {"name": checked(extra["name"]), **flt.wire()}
        if extra["description"] is not None:
            body["description"] = extra["description"]
        answer = _metadata(client.post("/api/corpus", body))
        if notices:  # the answer is JSON, so the notes are a field of it
            answer["deprecations"] = notices
        return as_text(answer)

    with_signature(
        build_corpus,
        [
            inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, annotation=Name),
            inspect.Parameter(
                "description",
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=Annotated[
                    str | None, Field(description="What the corpus is about.", max_length=2000)
                ],
            ),
            *model_parameters(CorpusFilter, CORPUS_OLD_NAMES),
        ],
    )

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
            "chosen by filters (project, types, concepts, files, since/until) and/or a "
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
