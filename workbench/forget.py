"""Forget observations: delete, scrub the source events and their spool copies, purge the file.

The one entry point behind ``DELETE /api/observation/{id}``, ``POST /api/observations/forget``
and ``workbench forget``. Each id goes through ``store.deletions.delete_observation`` (row,
tombstone, source event scrubbed, one transaction); then every spool copy of a scrubbed event
(``spool/``, ``processed/``, ``rejected/``: they hold the hook's body, the same payload) is
overwritten with zeros and removed; then one ``deletions.purge`` for the whole batch (FTS merge,
``VACUUM``, WAL truncated), so forgetting many ids costs one rebuild of the file.

The observation's own words (``forget_words``: tokens no other live observation of the project
uses) are taken out of the summaries of its session too, before the purge, so search, the
file and the next publish forget them; the caller (``service.runtime.Runtime.forget``) takes
them out of corpora and knowledge-agent conversations (``knowledge.forget_copies``).

The report says exactly what went: observation ids, scrubbed event ids (and the ``scrub``
records naming them), FTS rows, spool files, what the purge did, and under ``copies`` every
other place cleaned and every place it could not clean, each with how to remove what is left
there. The cached vectors of its text (embeddings can be inverted to text) are deleted before
the purge, unless another live observation holds the same text; the vector index drops and
zeroes its copy on the indexer's next pass (the caller wakes it). marimo's snapshots of the
notebooks' outputs are removed, and the process's caches of memory text (``recall.
text_caches``) emptied. The words themselves are never echoed in the report: it is printed
and logged.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench import forget_words
from workbench.notebook_files import snapshot_paths
from workbench.recall import text_caches, vectors
from workbench.shred import shred
from workbench.store import deletions
from workbench.store.deletions import Deleted, Purge

SPOOL_FOLDERS = ("", "processed", "rejected")
SPOOL_SUFFIXES = (".json", ".json.tmp")


@dataclass
class ForgetReport:
    deleted: list[Deleted] = field(default_factory=list)
    already_deleted: list[int] = field(default_factory=list)
    not_found: list[int] = field(default_factory=list)
    scrubbed_event_ids: list[int] = field(default_factory=list)
    scrub_record_ids: list[int] = field(default_factory=list)
    spool_files: list[str] = field(default_factory=list)
    purge: Purge | None = None
    words: list[str] = field(default_factory=list)  # never serialised: they are the secret
    cleaned: list[Copy] = field(default_factory=list)
    not_cleaned: list[Copy] = field(default_factory=list)

    def tally(self, place: str, done: list[str], failed: list[str], how: str) -> None:
        """List ``done`` under cleaned and ``failed`` under not cleaned (with ``how`` to remove
        what is left), each only when it holds anything."""
        if done:
            self.cleaned.append(Copy(place, done))
        if failed:
            self.not_cleaned.append(Copy(place, failed, how))

    def to_json(self) -> dict[str, Any]:
        return {
            "forgotten": [d.id for d in self.deleted],
            "alreadyDeleted": self.already_deleted,
            "notFound": self.not_found,
            "scrubbed": {
                "observationIds": [d.id for d in self.deleted],
                "eventIds": self.scrubbed_event_ids,
                "scrubRecordIds": self.scrub_record_ids,
                "ftsRows": len(self.deleted),
                "spoolFiles": self.spool_files,
            },
            "purge": {
                "ftsMerged": bool(self.purge and self.purge.fts_merged),
                "vacuumed": bool(self.purge and self.purge.vacuumed),
                "walTruncated": bool(self.purge and self.purge.wal_truncated),
            },
            "copies": {
                "words": len(self.words),
                "cleaned": [c.to_json() for c in self.cleaned],
                "notCleaned": [c.to_json() for c in self.not_cleaned],
            },
        }


@dataclass(frozen=True)
class Copy:
    """One place holding a copy of forgotten words: cleaned, or not (then how to remove it)."""

    place: str
    items: list[str]
    how_to_remove: str | None = None

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"place": self.place, "items": self.items}
        if self.how_to_remove is not None:
            found["howToRemove"] = self.how_to_remove
        return found


def forget(conn: sqlite3.Connection, spool_dir: Path, ids: list[int]) -> ForgetReport:
    """Forget every id in ``ids`` (duplicates ignored); purge once if anything changed."""
    report = ForgetReport()
    keys: list[str] = []
    said: list[forget_words.ForgottenText] = []
    embedded: dict[str, str] = {}  # text hash -> title, of the observations deleted
    for observation_id in dict.fromkeys(ids):
        text = forget_words.read_text(conn, observation_id)
        embedded.update(_embedded_text(conn, observation_id))
        gone = deletions.delete_observation(conn, observation_id)
        if gone is not None and text is not None:
            said.append(text)
        scrub = gone.scrub if gone is not None else None
        if gone is not None:
            report.deleted.append(gone)
        elif deletions.was_deleted(conn, observation_id):
            report.already_deleted.append(observation_id)
            # Trigger: deleted before scrubbing existed / Why: its payload is still in the
            # log / Outcome: forgetting it again scrubs the source now.
            scrub = deletions.scrub_earlier_deletion(conn, observation_id)
        else:
            report.not_found.append(observation_id)
        if scrub is not None and not scrub.already:
            report.scrubbed_event_ids.append(scrub.event_id)
            report.scrub_record_ids.append(scrub.record_id)
        if scrub is not None and scrub.event_key:
            keys.append(scrub.event_key)
    keys += _forget_words(conn, said, report)
    if report.deleted:
        _forget_vectors(conn, embedded, report)
        _forget_notebook_snapshots(report)
        text_caches.clear()  # what searches kept of the memory's words, in this process
    for key in keys:
        report.spool_files.extend(remove_spool_copies(spool_dir, key))
    if report.deleted or report.scrubbed_event_ids or report.spool_files:
        report.purge = purge = deletions.purge(conn)
        place = "search index and database file"
        if purge.vacuumed and purge.wal_truncated:
            report.cleaned.append(Copy(place, ["FTS merged", "VACUUM", "WAL truncated"]))
        else:
            report.not_cleaned.append(
                Copy(
                    place,
                    ["FTS merged"],
                    "another connection held the file; the next forget's purge finishes it",
                )
            )
    return report


def _embedded_text(conn: sqlite3.Connection, observation_id: int) -> dict[str, str]:
    """``{text hash: title}`` of the text the observation is embedded from (``vectors.
    embed_text``), read before it is deleted; empty when there is no such row."""
    row = conn.execute(
        "SELECT title, subtitle, narrative, facts, concepts FROM observations WHERE id = ?",
        (observation_id,),
    ).fetchone()
    if row is None:
        return {}
    return {vectors.text_hash(vectors.embed_text(row)): str(row[0] or "")}


def _forget_vectors(
    conn: sqlite3.Connection, embedded: dict[str, str], report: ForgetReport
) -> None:
    """Drop the cached vectors (every model) of the deleted observations' texts that no live
    observation shares, before the purge.

    Why here and not only in the indexer's next pass: that pass deletes the rows after the
    purge has run, so a SQLite built without ``SECURE_DELETE`` left their bytes in a freed
    page of the file, and until the pass ran the vector (which can be inverted to text) sat
    in the file as a live row. A text another observation still holds keeps its row: it is
    that observation's vector too (looked up by title, then compared whole).
    """
    if not embedded:
        return
    titles = sorted(set(embedded.values()))
    shared = {
        vectors.text_hash(vectors.embed_text(row))
        for row in conn.execute(
            "SELECT title, subtitle, narrative, facts, concepts FROM observations"
            " WHERE title IN (SELECT value FROM json_each(?))",
            (json.dumps(titles),),
        )
    }
    dropped = vectors.forget(conn, [h for h in embedded if h not in shared])
    if dropped:
        report.cleaned.append(Copy("cached vectors", [str(dropped)]))


def _forget_notebook_snapshots(report: ForgetReport) -> None:
    """Remove marimo's snapshots of the notebooks' outputs (``notebook_files.snapshot_paths``).

    Why: ``marimo export html`` (and ``marimo edit`` with ``auto_instantiate`` off) writes
    every output a notebook computed beside the notebook, outside the data dir: the corpus
    builder's preview shows memories' titles. A snapshot is only a cache of what a run
    showed (the next run writes it again), and which data dir it came from is not recorded,
    so every one goes, whatever it holds.
    """
    removed, kept = [], []
    for path in snapshot_paths():
        try:
            shred(path)
            removed.append(str(path))
        except OSError:
            kept.append(str(path))
    report.tally(
        "notebook snapshots",
        removed,
        kept,
        "marimo's snapshots of what a notebook showed; delete these files "
        "(`workbench notebook NAME --html FILE` exports without writing one)",
    )


def _forget_words(
    conn: sqlite3.Connection, said: list[forget_words.ForgottenText], report: ForgetReport
) -> list[str]:
    """Take each forgotten observation's own words out of its session's summaries; list the
    prompts that keep them. Returns the event keys of scrubbed summary sources (their spool
    copies go too)."""
    summaries: list[int] = []
    prompts: list[int] = []
    keys: list[str] = []
    for text in said:
        words = forget_words.distinctive_words(conn, text)
        report.words = sorted({*report.words, *words})
        if text.content_session_id is None:
            continue
        scrub = forget_words.scrub_summaries(conn, text.content_session_id, words)
        summaries += scrub.summary_ids
        report.scrubbed_event_ids += scrub.event_ids
        keys += scrub.event_keys
        prompts += forget_words.prompts_holding(conn, text.content_session_id, words)
    if summaries:
        report.cleaned.append(Copy("summaries", [str(i) for i in sorted(set(summaries))]))
    if prompts:
        report.not_cleaned.append(
            Copy(
                "prompts",
                [str(i) for i in sorted(set(prompts))],
                "your own prompts are kept as typed and no workbench command edits them; "
                "stop the service and delete them with sqlite3 (DELETE FROM user_prompts "
                "WHERE id IN (...)), then run workbench reindex",
            )
        )
    return keys


def remove_spool_copies(spool_dir: Path, event_key: str) -> list[str]:
    """Overwrite with zeros and remove every spool file of the event ``event_key``; their
    paths relative to ``spool_dir``.

    An envelope belongs to the event when its own key is ``event_key`` or, for a tool call,
    when the service would have keyed it so (``tool:<session>:<tool_use_id>``, see
    ``workbench.ingest``): the hook's idempotency key is not kept for those. Reads every
    envelope under ``spool/`` (normally a handful: only what was captured while the service
    was down, and ``processed/`` is pruned after ``spool_retention_days``).
    """
    removed = []
    for folder in SPOOL_FOLDERS:
        directory = spool_dir / folder if folder else spool_dir
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if not path.name.endswith(SPOOL_SUFFIXES) or not path.is_file():
                continue
            try:
                data = path.read_bytes()
                if _envelope_key(data) != event_key and path.name.split(".")[0] != event_key:
                    continue
                shred(path)
            except OSError:
                continue  # unreadable: left for a person; the report lists only what went
            removed.append(str(path.relative_to(spool_dir)))
    return removed


def _envelope_key(data: bytes) -> str | None:
    """The event key the service gives this envelope's event (None when unreadable)."""
    try:
        envelope = json.loads(data)
    except ValueError:
        return None
    if not isinstance(envelope, dict):
        return None
    body = envelope.get("body")
    if isinstance(body, dict) and body.get("tool_use_id") and body.get("contentSessionId"):
        return f"tool:{body['contentSessionId']}:{body['tool_use_id']}"
    key = envelope.get("event_key")
    return key if isinstance(key, str) else None
