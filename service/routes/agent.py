"""The knowledge agent over HTTP: a conversation primed with one corpus.

- ``POST /api/corpus/{name}/prime`` → ``{session_id, name}``;
- ``POST /api/corpus/{name}/query`` ``{question}`` → ``{answer, session_id, citations,
  usage}``; a query on a corpus that is not primed primes it automatically
  (``auto_primed: true``);
- ``POST /api/corpus/{name}/reprime`` starts a fresh conversation.

The paths sit under the corpus they talk about; the corpus itself (build, list, show, rebuild,
delete) is ``corpora.py``. An unknown corpus is a 404 listing the names that exist; the body
of ``query`` is plain JSON, checked here, so a stray field is a 400 that shows the form.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from service.deps import KnowledgeAgentDep
from workbench.api_models.agent import Answer, Primed
from workbench.errors import InvalidInput

router = APIRouter(prefix="/api/corpus", tags=["agent"])

JsonObject = Annotated[dict[str, Any], Body()]


@router.post("/{name}/prime", response_model=Primed)
def prime(name: str, agent: KnowledgeAgentDep) -> dict[str, Any]:
    return agent.prime(name)


@router.post("/{name}/query", response_model=Answer)
def query(name: str, body: JsonObject, agent: KnowledgeAgentDep) -> dict[str, Any]:
    unknown = sorted(set(body) - {"question"})
    if unknown:
        raise InvalidInput(
            f'unknown field {", ".join(repr(k) for k in unknown)}; send {{"question": "…"}}'
        )
    return agent.query(name, body.get("question"))


@router.post("/{name}/reprime", response_model=Primed)
def reprime(name: str, agent: KnowledgeAgentDep) -> dict[str, Any]:
    return agent.reprime(name)
