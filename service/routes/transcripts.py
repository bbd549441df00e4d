"""``POST /api/transcripts/import``: read what is new in one agent transcript file.

``workbench import-transcripts`` sends one request per file (its progress bar advances per
file); the service reads the file itself, as the store's one writer, from the offset it saved
(``workbench.transcripts.importer``). The path must be absolute and name a ``.jsonl`` file;
a file that is gone or unreadable is reported in ``errors`` (a 200: the batch goes on).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from service.deps import IngestorDep
from workbench.api_models.transcripts import TranscriptImported
from workbench.errors import InvalidInput
from workbench.transcripts.importer import import_file

router = APIRouter(prefix="/api/transcripts", tags=["transcripts"])


class TranscriptImport(BaseModel):
    """One file to read (``path``, absolute, ``*.jsonl``)."""

    model_config = ConfigDict(extra="forbid")
    path: Annotated[str, Field(min_length=1, max_length=4096)]


@router.post("/import", response_model=TranscriptImported)
def import_transcript(body: TranscriptImport, ingestor: IngestorDep) -> dict[str, Any]:
    path = Path(body.path)
    if "\x00" in body.path or not path.is_absolute():
        raise InvalidInput(
            f"path {body.path[:200]!r} is not an absolute path; send the transcript file's "
            "full path (workbench import-transcripts expands PATHS for you)"
        )
    if path.suffix != ".jsonl":
        raise InvalidInput(
            f"path {body.path[:200]!r} is not a .jsonl file; agent transcripts are JSON Lines "
            "(~/.claude/projects/**/*.jsonl, ~/.codex/sessions/**/*.jsonl)"
        )
    settings = ingestor.settings
    return import_file(ingestor, path, settings.transcript_max_line_bytes).to_json()
