"""Integer parameter types shared by routes and bodies, bounded to what SQLite holds.

One definition per kind, so an id of ``2**63`` is the same 422 naming the parameter on every
route (``workbench.bounds`` says why the bound exists).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from pydantic import Field

from workbench.bounds import SQLITE_INT_MAX

RowId = Annotated[int, Field(ge=1, le=SQLITE_INT_MAX)]
ObservationIdPath = Annotated[
    int, Path(ge=1, le=SQLITE_INT_MAX, description="an observation id (GET /api/search finds them)")
]
