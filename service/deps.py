"""``Annotated`` dependency aliases, so route signatures read ``def route(runtime: RuntimeDep)``.

Routes reach the running service only through these typed providers: ``runtime_of`` is the
one place that reads ``app.state`` (untyped by Starlette), and checks what it finds.

The providers are ``async def`` on purpose: FastAPI runs a plain ``def`` dependency in the
thread pool, and four such hops per request cost more than the whole ingest transaction.
They run on the event loop, so none of them may touch SQLite (a lock held by another process
would freeze every request); routes do their store work off the loop.
There is deliberately no connection dependency: a dependency may run on another thread than
a sync route, and each thread must use its own connection (``runtime.store.conn`` inside the
route body).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from service.runtime import Runtime
from workbench.errors import ServiceUnavailable
from workbench.ingest import Ingestor
from workbench.knowledge.agent import KnowledgeAgent
from workbench.recall.indexer import Indexer
from workbench.settings import Settings


def runtime_of(request: Request) -> Runtime:
    """The app's ``Runtime``, set by the lifespan (``service.app.create_app``)."""
    runtime = getattr(request.app.state, "runtime", None)
    if not isinstance(runtime, Runtime):
        raise ServiceUnavailable("the service is still starting or already stopping; retry")
    return runtime


async def get_runtime(request: Request) -> Runtime:
    return runtime_of(request)


async def get_ingestor(request: Request) -> Ingestor:
    return runtime_of(request).ingestor


async def get_settings(request: Request) -> Settings:
    return runtime_of(request).settings


async def get_knowledge_agent(request: Request) -> KnowledgeAgent:
    """The runtime's one ``KnowledgeAgent``; making it touches no file (safe on the loop)."""
    return runtime_of(request).knowledge_agent()


async def get_indexer(request: Request) -> Indexer:
    """The running indexer, or a 503 that says how to get one back."""
    indexer = runtime_of(request).indexer
    if indexer is None or not indexer.is_alive():
        raise ServiceUnavailable(
            "the indexer is not running in this service; restart it with "
            "`workbench stop && workbench serve --detach`"
        )
    return indexer


async def get_instance_id(request: Request) -> str:
    """The data dir's id (``workbench/instance.py``) that ``create_app`` put on the app."""
    value = getattr(request.app.state, "instance_id", "")
    return value if isinstance(value, str) else ""


async def get_event_key(request: Request) -> str | None:
    """The hook's idempotency key (``Idempotency-Key`` header), if it sent one."""
    key = request.headers.get("idempotency-key")
    return key[:200] if key else None


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
IngestorDep = Annotated[Ingestor, Depends(get_ingestor)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
KnowledgeAgentDep = Annotated[KnowledgeAgent, Depends(get_knowledge_agent)]
IndexerDep = Annotated[Indexer, Depends(get_indexer)]
EventKeyDep = Annotated[str | None, Depends(get_event_key)]
InstanceIdDep = Annotated[str, Depends(get_instance_id)]
