"""``GET /api/observation/{id}/injections``: one observation's history in the injection ledger."""

from __future__ import annotations

from workbench.api_models.base import CamelModel


class InjectionItem(CamelModel):
    injection_id: int
    kind: str
    shown: str
    content_session_id: str | None
    project: str | None
    tokens: int
    created_at: str


class Injected(CamelModel):
    count: int
    sessions: int
    by_kind: dict[str, int]
    first: str | None
    last: str | None
    items: list[InjectionItem]


class FetchItem(CamelModel):
    source: str | None
    content_session_id: str | None
    created_at: str


class Fetched(CamelModel):
    count: int
    items: list[FetchItem]


class InjectionHistory(CamelModel):
    observation_id: int
    discovery_tokens: int
    injected: Injected
    fetched: Fetched
