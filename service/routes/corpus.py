"""Corpora and the knowledge agent over HTTP (paths and methods are the contract).

- ``POST /api/corpus`` builds (or replaces) a corpus from ``{name, description?, project?,
  types?, concepts?, files?, query?, since?, until?, platform_source?, limit?, team?}`` (the
  ``CorpusFilter`` fields; the old ``dateStart``/``dateEnd``/``platformSource`` still work for
  one release and add deprecation headers, ``service.deprecation``);
  ``GET /api/corpus`` lists them with stats and primed state; ``GET /api/corpus/{name}`` is
  one corpus's metadata (no observations); ``DELETE`` removes it; ``POST …/rebuild`` re-runs
  its stored filter (clearing the session, without re-priming).
- ``POST …/prime`` → ``{session_id, name}``; ``POST …/query`` ``{question}`` → ``{answer,
  session_id, citations, usage}``; ``POST …/reprime`` starts a fresh conversation. A query on
  a corpus that is not primed primes it automatically (``auto_primed: true``).

Validation is the library's, so the HTTP API, the CLI and the MCP tools refuse the same
things with the same words: a bad name is a 400 ``INVALID_CORPUS_NAME`` stating the rule, a bad
filter a 400 ``INVALID_INPUT`` (an unknown ``platformSource`` a 422 ``UNKNOWN_PLATFORM``
listing the known ones), an unknown corpus a 404 listing the names that exist. The
build body is read as plain JSON for that reason (a pydantic body would answer 422 first).

The GET/DELETE routes take ``{name:path}`` and are registered last: a name with an encoded
slash (``a%2Fb``) then reaches the name check and gets its 400, instead of a bare 404.
Routes are plain ``def`` (thread pool); each thread uses its own connection.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response

from service.deprecation import mark_deprecated
from service.deps import RuntimeDep
from workbench.errors import InvalidInput
from workbench.knowledge import corpus
from workbench.knowledge.agent import KnowledgeAgent
from workbench.knowledge.corpus_filter import parse_filter

router = APIRouter(prefix="/api/corpus", tags=["corpus"])

JsonObject = Annotated[dict[str, Any], Body()]


def _agent(request: Request, runtime: Any) -> KnowledgeAgent:
    """The app's one ``KnowledgeAgent`` (it caches the Anthropic client), made on first use."""
    agent: KnowledgeAgent | None = getattr(request.app.state, "knowledge_agent", None)
    if agent is None or agent.store_or_conn is not runtime.store:
        agent = KnowledgeAgent(
            runtime.settings,
            store_or_conn=runtime.store,
            ranker=getattr(runtime, "vector_ranker", None),
        )
        request.app.state.knowledge_agent = agent
    return agent


@router.post("")
def build(
    body: JsonObject, request: Request, response: Response, runtime: RuntimeDep
) -> dict[str, Any]:
    fields = dict(body)
    name = fields.pop("name", None)
    description = fields.pop("description", "")
    corpus.validate_name(name)  # before the filter: the name error is the one to fix first
    flt = parse_filter(fields)
    mark_deprecated(response, flt.deprecations())  # old spellings: dateStart, platformSource…
    agent = _agent(request, runtime)
    built, replaced = corpus.build(
        runtime.store.conn,
        runtime.settings,
        name,
        flt,
        description,
        search=agent.selection_search() if flt.query else None,
    )
    return {**built.metadata(), "replaced": replaced}


@router.get("")
def list_corpora(runtime: RuntimeDep) -> dict[str, Any]:
    items = corpus.list_all(runtime.settings)
    return {"corpora": items, "count": len(items)}


@router.post("/{name}/rebuild")
def rebuild(name: str, request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    agent = _agent(request, runtime)
    rebuilt, changes = corpus.rebuild(
        runtime.store.conn, runtime.settings, name, search=agent.selection_search()
    )
    return {**rebuilt.metadata(), **changes}


@router.post("/{name}/prime")
def prime(name: str, request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    return _agent(request, runtime).prime(name)


@router.post("/{name}/query")
def query(name: str, body: JsonObject, request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    unknown = sorted(set(body) - {"question"})
    if unknown:
        raise InvalidInput(
            f'unknown field {", ".join(repr(k) for k in unknown)}; send {{"question": "…"}}'
        )
    return _agent(request, runtime).query(name, body.get("question"))


@router.post("/{name}/reprime")
def reprime(name: str, request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    return _agent(request, runtime).reprime(name)


@router.get("/{name:path}")
def show(name: str, runtime: RuntimeDep) -> dict[str, Any]:
    return corpus.load(runtime.settings, name).metadata()


@router.delete("/{name:path}")
def delete(name: str, runtime: RuntimeDep) -> dict[str, Any]:
    return corpus.delete(runtime.settings, name)
