"""``POST /api/transcripts/import``: what reading one agent transcript file did."""

from __future__ import annotations

from workbench.api_models.base import CamelModel


class TranscriptImported(CamelModel):
    """One file's pass (``workbench.transcripts.importer.FileReport``): events ``imported``,
    already ``present`` (in the log, or a session the hooks delivered), ``skipped`` by a rule;
    lines ``ignored`` (no memory in them), ``unknown`` (a type not known here) and
    ``bad_lines`` (not JSON, or over the size limit); ``pending_bytes`` of a last line still
    being written; ``restarted`` when the file was rotated or rewritten."""

    path: str
    platform: str
    sessions: list[str]
    lines: int
    imported: int
    present: int
    skipped: int
    ignored: int
    unknown: int
    bad_lines: int
    pending_bytes: int
    restarted: bool
    errors: list[str]
