"""Corpora over HTTP (paths and methods are the contract); the agent's routes are ``agent.py``.

- ``POST /api/corpus`` builds (or replaces) a corpus from ``{name, description?, project?,
  types?, concepts?, files?, query?, since?, until?, platform_source?, limit?, team?}`` (the
  ``CorpusFilter`` fields; the old ``dateStart``/``dateEnd``/``platformSource`` still work for
  one release and add deprecation headers, ``service.deprecation``);
  ``GET /api/corpus`` lists them with stats and primed state; ``GET /api/corpus/{name}`` is
  one corpus's metadata (no observations); ``DELETE`` removes it; ``POST …/rebuild`` re-runs
  its stored filter (clearing the session, without re-priming).

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

from fastapi import APIRouter, Body, Response

from service.deprecation import mark_deprecated
from service.deps import KnowledgeAgentDep, RuntimeDep
from workbench.api_models.corpora import (
    CorpusBuilt,
    CorpusDeleted,
    CorpusInfo,
    CorpusList,
    CorpusRebuilt,
)
from workbench.knowledge import corpus
from workbench.knowledge.corpus_filter import parse_filter

router = APIRouter(prefix="/api/corpus", tags=["corpus"])

JsonObject = Annotated[dict[str, Any], Body()]


@router.post("", response_model=CorpusBuilt)
def build(
    body: JsonObject, response: Response, runtime: RuntimeDep, agent: KnowledgeAgentDep
) -> CorpusBuilt:
    fields = dict(body)
    name = fields.pop("name", None)
    description = fields.pop("description", "")
    corpus.validate_name(name)  # before the filter: the name error is the one to fix first
    flt = parse_filter(fields)
    mark_deprecated(response, flt.deprecations())  # old spellings: dateStart, platformSource…
    built, replaced = corpus.build(
        runtime.store.conn,
        runtime.settings,
        name,
        flt,
        description,
        search=agent.selection_search() if flt.query else None,
    )
    return CorpusBuilt(**dict(built.metadata()), replaced=replaced)


@router.get("", response_model=CorpusList)
def list_corpora(runtime: RuntimeDep) -> CorpusList:
    return corpus.list_all(runtime.settings)


@router.post("/{name}/rebuild", response_model=CorpusRebuilt)
def rebuild(name: str, runtime: RuntimeDep, agent: KnowledgeAgentDep) -> CorpusRebuilt:
    rebuilt, changes = corpus.rebuild(
        runtime.store.conn, runtime.settings, name, search=agent.selection_search()
    )
    return CorpusRebuilt(
        **dict(rebuilt.metadata()), added=changes["added"], removed=changes["removed"]
    )


@router.get("/{name:path}", response_model=CorpusInfo)
def show(name: str, runtime: RuntimeDep) -> CorpusInfo:
    return corpus.load(runtime.settings, name).metadata()


@router.delete("/{name:path}", response_model=CorpusDeleted)
def delete(name: str, runtime: RuntimeDep) -> CorpusDeleted:
    return CorpusDeleted.model_validate(corpus.delete(runtime.settings, name))
