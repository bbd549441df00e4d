"""``Page[T]``: the one page shape every list route answers, ``{items, hasMore, offset, limit}``.

``T`` is the stored record (``workbench.models``): its fields keep their snake_case names.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel

from workbench.api_models.base import CamelModel

T = TypeVar("T", bound=BaseModel)


class Page(CamelModel, Generic[T]):
    items: list[T]
    has_more: bool
    offset: int
    limit: int
