"""Corpora: named, filtered, frozen sets of observations, one JSON file each.

A corpus lives at ``<data_dir>/corpora/<name>.corpus.json`` and holds: ``version``, ``name``,
``description``, ``created_at``, ``updated_at``, ``filter`` (re-run by ``rebuild``), ``stats``
(``observation_count``, ``token_estimate``, ``date_range`` {earliest, latest},
``type_breakdown``), ``system_prompt``, ``session_id`` (the knowledge agent's conversation;
null until primed) and ``observations`` (oldest first). It is derived state: ``rebuild``
regenerates it from the store, and a corpus with 0 observations is valid.

Names are checked on the raw value against ``^[A-Za-z0-9._-]+$`` (no trimming: ``" bad "`` is
refused, not fixed, so no request can touch a different file than the one it named), ``.``
and ``..`` are refused, and the resolved path must still sit directly inside the corpora dir.

Files are written atomically (``atomic.write_json``), and every read-modify-write of one
corpus (build, rebuild, setting the session) holds that corpus's lock, so concurrent requests
in the service never lose each other's change.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from workbench.clock import iso_from_ms, now_ms
from workbench.errors import CorpusNotFound, InvalidCorpusName, InvalidInput, WorkbenchError
from workbench.knowledge import atomic, conversations
from workbench.knowledge.corpus_filter import CorpusFilter
from workbench.knowledge.prompts import system_prompt
from workbench.settings import Settings
from workbench.sources.select import LocalRows, MergedRows, SearchFn, Selector
from workbench.tokens import estimate_tokens

VERSION = 1
SUFFIX = ".corpus.json"
MAX_NAME = 200
MAX_DESCRIPTION = 2_000
LARGE_CORPUS_TOKENS = 150_000  # Claude's context is 200k tokens; leave room for the Q&A
_NAME = re.compile(r"[A-Za-z0-9._-]+")
_locks: dict[str, threading.RLock] = {}
_locks_guard = threading.Lock()
_parsed: dict[str, tuple[tuple[int, int, int], Corpus]] = {}  # path -> (file key, corpus)


class CorpusCorrupt(WorkbenchError):
    """A corpus file that is not valid JSON or not a corpus."""

    status_code = 500
    code = "CORPUS_CORRUPT"


class DateRange(BaseModel):
    earliest: str | None = None
    latest: str | None = None


class CorpusStats(BaseModel):
    observation_count: int = 0
    token_estimate: int = 0
    date_range: DateRange = Field(default_factory=DateRange)
    type_breakdown: dict[str, int] = Field(default_factory=dict)


class CorpusObservation(BaseModel):
    """The fields of an observation a corpus keeps (what the agent reads and cites)."""

    id: int
    type: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = Field(default_factory=list)
    concepts: list[str] = Field(default_factory=list)
    files_read: list[str] = Field(default_factory=list)
    files_modified: list[str] = Field(default_factory=list)
    project: str
    created_at: str
    created_at_epoch: int
    author: str | None = None  # a colleague's (team corpus); None: this machine's own


class Corpus(BaseModel):
    """One corpus file."""

    version: int = VERSION
    name: str
    description: str = ""
    created_at: str
    updated_at: str
    filter: CorpusFilter
    stats: CorpusStats
    system_prompt: str
    session_id: str | None = None
    observations: list[CorpusObservation] = Field(default_factory=list)

    def ids(self) -> set[int]:
        """This machine's observation ids (a colleague's id names a row in their store)."""
        return {o.id for o in self.observations if o.author is None}

    def metadata(self) -> CorpusInfo:
        """Everything but the observations, plus the primed state and any size warning."""
        warnings: list[str] = []
        if self.stats.token_estimate > LARGE_CORPUS_TOKENS:
            warnings.append(
                f"~{self.stats.token_estimate:,} tokens is more than a Claude conversation can "
                f"hold comfortably (about {LARGE_CORPUS_TOKENS:,}, with room for questions); "
                "build it again with a smaller limit or a narrower filter. The offline agent "
                "is not affected."
            )
        return CorpusInfo(
            **self.model_dump(exclude={"observations"}),
            primed=self.session_id is not None,
            warnings=warnings,
        )


# ----- what the routes and the CLI answer about a corpus (``api_models.corpora`` re-exports) ---
# A corpus's metadata: the stored corpus without its observations (snake_case, as stored; the
# filter as its stored object), plus ``primed`` and ``warnings``. (A comment, not a docstring:
# a docstring would become its OpenAPI description, and the published schema stays as it was.)
class CorpusInfo(BaseModel):
    version: int
    name: str
    description: str
    created_at: str
    updated_at: str
    filter: dict[str, Any]
    stats: CorpusStats
    system_prompt: str
    session_id: str | None
    primed: bool
    warnings: list[str]


class CorpusBuilt(CorpusInfo):
    replaced: bool


class CorpusRebuilt(CorpusInfo):
    added: int
    removed: int


class UnreadableCorpus(BaseModel):
    """A corpus file that could not be read, listed with why."""

    name: str
    error: str
    primed: bool


class CorpusList(BaseModel):
    corpora: list[CorpusInfo | UnreadableCorpus]
    count: int


class CorpusDeleted(BaseModel):
    name: str
    deleted: bool


# ----- names and paths -------------------------------------------------------------------------
def validate_name(name: object) -> str:
    """``name`` unchanged if it is a valid corpus name; ``InvalidCorpusName`` otherwise."""
    if not isinstance(name, str) or not name:
        raise InvalidCorpusName(name, "empty" if name == "" else "not text")
    if len(name) > MAX_NAME:
        raise InvalidCorpusName(name[:40] + "…", f"{len(name)} characters")
    if name in (".", ".."):
        raise InvalidCorpusName(name, "a directory reference")
    if not _NAME.fullmatch(name):
        raise InvalidCorpusName(name)
    return name


def path_for(settings: Settings, name: object) -> Path:
    """The file of corpus ``name``; refuses any name that could leave the corpora dir."""
    valid = validate_name(name)
    folder = settings.corpora_dir.resolve()
    path = (folder / f"{valid}{SUFFIX}").resolve()
    if path.parent != folder:  # unreachable with the rule above; kept as the last guard
        raise InvalidCorpusName(name, "resolves outside the corpora dir")
    return path


def names(settings: Settings) -> list[str]:
    """Every corpus name on disk, sorted (files with invalid names are ignored)."""
    folder = settings.corpora_dir
    if not folder.is_dir():
        return []
    found = (p.name[: -len(SUFFIX)] for p in folder.glob(f"*{SUFFIX}") if p.is_file())
    return sorted(n for n in found if _NAME.fullmatch(n) and n not in (".", ".."))


def holding(settings: Settings, observation_ids: list[int]) -> list[str]:
    """Names of corpora whose frozen copy still includes any of the observations, sorted.

    What a delete reports: those corpora keep the text until their next ``rebuild``. An
    unreadable corpus is skipped here (``GET /api/corpus`` reports it).
    """
    wanted = set(observation_ids)
    if not wanted:
        return []
    found = []
    for name in names(settings):
        try:
            if wanted & set(load(settings, name).ids()):
                found.append(name)
        except WorkbenchError:
            continue
    return sorted(found)


@contextmanager
def lock(settings: Settings, name: str) -> Iterator[None]:
    """Hold corpus ``name`` for a read-modify-write (re-entrant, in-process)."""
    key = str(path_for(settings, name))
    with _locks_guard:
        held = _locks.setdefault(key, threading.RLock())
    with held:
        yield


# ----- reading and writing ----------------------------------------------------------------------
def load(settings: Settings, name: object) -> Corpus:
    """The corpus ``name``; ``CorpusNotFound`` lists the names that do exist.

    Parsed corpora are cached by (inode, mtime, size): every question to the agent loads its
    corpus, and parsing 2,000 observations costs ~50 ms. ``os.replace`` gives each write a new
    inode, so a rewritten file is never served stale. Treat the result as read-only (updates
    go through ``model_copy`` + ``save``).
    """
    path = path_for(settings, name)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise CorpusNotFound(str(name), names(settings)) from None
    key = (info.st_ino, info.st_mtime_ns, info.st_size)
    with _locks_guard:
        cached = _parsed.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        data = atomic.read_json(path)
    except FileNotFoundError:
        raise CorpusNotFound(str(name), names(settings)) from None
    except (OSError, ValueError) as exc:
        raise CorpusCorrupt(
            f"corpus file {path} cannot be read ({exc}). Delete it with `workbench corpus rm "
            f"{name}` and build it again."
        ) from None
    try:
        loaded = Corpus.model_validate(data)
    except ValidationError as exc:
        raise CorpusCorrupt(
            f"corpus file {path} is not a valid corpus ({exc.error_count()} problems, first: "
            f"{exc.errors()[0]['msg']}). Delete it with `workbench corpus rm {name}` and build "
            "it again."
        ) from None
    with _locks_guard:
        if len(_parsed) >= 8:
            _parsed.pop(next(iter(_parsed)))
        _parsed[str(path)] = (key, loaded)
    return loaded


def save(settings: Settings, corpus: Corpus) -> Path:
    """Write ``corpus`` to its file atomically; return the path."""
    path = path_for(settings, corpus.name)
    data = corpus.model_dump()
    for row in data["observations"]:  # only a colleague's observation names its author
        if row.get("author") is None:
            row.pop("author", None)
    atomic.write_json(path, data)
    return path


def list_all(settings: Settings) -> CorpusList:
    """Metadata of every readable corpus (an unreadable file is listed with its error)."""
    out: list[CorpusInfo | UnreadableCorpus] = []
    for name in names(settings):
        try:
            out.append(load(settings, name).metadata())
        except WorkbenchError as exc:
            out.append(UnreadableCorpus(name=name, error=exc.message, primed=False))
    return CorpusList(corpora=out, count=len(out))


def delete(settings: Settings, name: str) -> dict[str, Any]:
    """Remove corpus ``name`` and its agent conversation."""
    with lock(settings, name):
        path = path_for(settings, name)
        if not path.is_file():
            raise CorpusNotFound(name, names(settings))
        session_id = _stored_session(path)  # tolerant: a corrupt file is what people delete
        path.unlink()
        conversations.discard(settings.conversations_dir, session_id)
    return {"name": name, "deleted": True}


def set_session(settings: Settings, name: str, session_id: str | None) -> Corpus:
    """Record the agent conversation of ``name`` (None: not primed)."""
    with lock(settings, name):
        corpus = load(settings, name)
        if corpus.session_id != session_id:
            corpus = corpus.model_copy(update={"session_id": session_id})
            save(settings, corpus)
        return corpus


# ----- building ----------------------------------------------------------------------------------
def build(
    conn: sqlite3.Connection,
    settings: Settings,
    name: object,
    flt: CorpusFilter,
    description: object = "",
    *,
    search: SearchFn | None = None,
) -> tuple[Corpus, bool]:
    """Select, render and write corpus ``name``; returns ``(corpus, replaced)``.

    Building over an existing name replaces that corpus (a new filter means a new corpus);
    its agent conversation is discarded, since it was primed on other observations.
    """
    valid = validate_name(name)
    text = _description(description)
    chosen = source_for(conn, settings, flt, search).select(flt.selection())
    with lock(settings, valid):
        path = path_for(settings, valid)
        existed = path.is_file()
        previous_session = _stored_session(path) if existed else None
        stamp = iso_from_ms(now_ms())
        corpus = assemble(valid, text, flt, chosen, created_at=stamp, updated_at=stamp)
        save(settings, corpus)
        conversations.discard(settings.conversations_dir, previous_session)
        return corpus, existed


def rebuild(
    conn: sqlite3.Connection, settings: Settings, name: str, *, search: SearchFn | None = None
) -> tuple[Corpus, dict[str, int]]:
    """Re-run the stored filter; returns the corpus and ``{added, removed}`` counts.

    Does not re-prime: the session is cleared (and its conversation discarded) because it was
    primed on the old observations; the next prime, or the next query, starts a fresh one.
    """
    with lock(settings, name):
        old = load(settings, name)
        chosen = source_for(conn, settings, old.filter, search).select(old.filter.selection())
        corpus = assemble(
            old.name,
            old.description,
            old.filter,
            chosen,
            created_at=old.created_at,
            updated_at=iso_from_ms(now_ms()),
        )
        save(settings, corpus)
        conversations.discard(settings.conversations_dir, old.session_id)
    before, after = old.ids(), corpus.ids()
    return corpus, {"added": len(after - before), "removed": len(before - after)}


def source_for(
    conn: sqlite3.Connection, settings: Settings, flt: CorpusFilter, search: SearchFn | None
) -> Selector:
    """What ``flt`` selects from: this store, or with ``flt.team`` this store and the team
    lake as one (the newest ``flt.limit`` of both, oldest first; local wins on duplicates)."""
    local = LocalRows(conn, search)
    if not flt.team:
        return local
    from workbench.team.source import TeamSource

    return MergedRows(local, TeamSource(settings))


def assemble(
    name: str,
    description: str,
    flt: CorpusFilter,
    chosen: list[dict[str, Any]],
    *,
    created_at: str,
    updated_at: str,
) -> Corpus:
    """The corpus for these observations: stats, system prompt and token estimate computed."""
    from workbench.knowledge.render import corpus_text

    kept = [CorpusObservation.model_validate(row) for row in chosen]
    counts = Counter(o.type for o in kept)
    stats = CorpusStats(
        observation_count=len(kept),
        date_range=DateRange(
            earliest=kept[0].created_at if kept else None,
            latest=kept[-1].created_at if kept else None,
        ),
        type_breakdown=dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),
    )
    prompt = system_prompt(
        name=name,
        description=description,
        filter_line=flt.describe(),
        count=len(kept),
        earliest=stats.date_range.earliest,
        latest=stats.date_range.latest,
    )
    corpus = Corpus(
        name=name,
        description=description,
        created_at=created_at,
        updated_at=updated_at,
        filter=flt,
        stats=stats,
        system_prompt=prompt,
        observations=kept,
    )
    # What priming costs: the instructions plus the fenced corpus, as the model reads them.
    corpus.stats.token_estimate = estimate_tokens(prompt) + estimate_tokens(corpus_text(corpus))
    return corpus


def _stored_session(path: Path) -> str | None:
    """The session id recorded in a corpus file, without validating the whole corpus."""
    try:
        data = atomic.read_json(path)
    except (OSError, ValueError):
        return None  # unreadable: there is no conversation we could find anyway
    value = data.get("session_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _description(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"description must be text, got {value!r}")
    if len(value) > MAX_DESCRIPTION:
        raise InvalidInput(
            f"description is {len(value)} characters; at most {MAX_DESCRIPTION} are allowed"
        )
    return value.strip()
