"""Export and import in the one workbench-export JSON format."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from service.deps import RuntimeDep
from workbench.api_models.transfer import ExportDocument, Imported
from workbench.store import transfer

router = APIRouter(prefix="/api", tags=["transfer"])


@router.get("/export", response_model=ExportDocument)
def export(
    runtime: RuntimeDep, project: Annotated[str | None, Query(max_length=200)] = None
) -> dict[str, Any]:
    conn = runtime.store.conn
    return transfer.export(conn, project)


@router.post("/import", response_model=Imported)
def import_(runtime: RuntimeDep, document: Annotated[Any, Body()]) -> dict[str, Any]:
    conn = runtime.store.conn
    doc = transfer.parse(document)
    return {"imported": transfer.import_document(conn, doc)}
