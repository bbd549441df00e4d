"""``Annotated`` dependency aliases, so route signatures read ``def route(conn: ConnDep)``.

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
from workbench.ingest import Ingestor
from workbench.knowledge.agent import KnowledgeAgent
from workbench.settings import Settings


async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_ingestor(request: Request) -> Ingestor:
    runtime: Runtime = request.app.state.runtime
    return runtime.ingestor


async def get_settings(request: Request) -> Settings:
    runtime: Runtime = request.app.state.runtime
    return runtime.settings


async def get_knowledge_agent(request: Request) -> KnowledgeAgent:
    """The runtime's one ``KnowledgeAgent``; making it touches no file (safe on the loop)."""
    runtime: Runtime = request.app.state.runtime
    return runtime.knowledge_agent()


async def get_event_key(request: Request) -> str | None:
    """The hook's idempotency key (``Idempotency-Key`` header), if it sent one."""
    key = request.headers.get("idempotency-key")
    return key[:200] if key else None


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
IngestorDep = Annotated[Ingestor, Depends(get_ingestor)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
KnowledgeAgentDep = Annotated[KnowledgeAgent, Depends(get_knowledge_agent)]
EventKeyDep = Annotated[str | None, Depends(get_event_key)]
