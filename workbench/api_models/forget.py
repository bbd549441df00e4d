"""Forgetting observations: ``DELETE /api/observation/{id}``, ``POST /api/observations/forget``.

The report's part is ``workbench.forget.ForgetReport.to_json``; the routes add where the
vectors stand and which corpora still hold the text.
"""

from __future__ import annotations

from typing import Literal

from workbench.api_models.base import CamelModel


class Scrubbed(CamelModel):
    observation_ids: list[int]
    event_ids: list[int]
    scrub_record_ids: list[int]
    fts_rows: int
    spool_files: list[str]


class Purged(CamelModel):
    fts_merged: bool
    vacuumed: bool
    wal_truncated: bool


class CopyPlace(CamelModel):
    """One place that held a copy of forgotten words: cleaned, or not and how to remove it."""

    place: str
    items: list[str]
    how_to_remove: str | None = None


class Copies(CamelModel):
    """Every other copy: ``words`` counts the observation's own words (never listed)."""

    words: int
    cleaned: list[CopyPlace]
    not_cleaned: list[CopyPlace]


class Forgotten(CamelModel):
    """``POST /api/observations/forget``: what went, what was not there, what was scrubbed."""

    forgotten: list[int]
    already_deleted: list[int]
    not_found: list[int]
    scrubbed: Scrubbed
    purge: Purged
    copies: Copies
    vectors: Literal["removing", "none"]
    corpora: list[str]


class Deleted(Forgotten):
    """``DELETE /api/observation/{id}``: the same report for one id, and a sentence."""

    deleted: bool
    id: int
    project: str
    event_id: int | None
    message: str
