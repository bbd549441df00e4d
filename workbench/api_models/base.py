"""``CamelModel``: the base of every reply whose wire names are camelCase."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Python names in snake_case, wire names in camelCase; either is accepted on input."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
