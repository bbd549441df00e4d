"""Result rows: what a search hit or a timeline item says about one record, loaded by id.

Rankers return ids; only the page that is actually returned is loaded here, with the columns
the compact index needs (no JSON parsing: the token estimate counts the raw JSON text). So a
search over 100,000 observations reads at most ``limit`` rows of text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from workbench.recall.filters import Kind
from workbench.tokens import estimate_tokens

RecordKind = Literal["observation", "summary", "prompt"]
KIND_OF: dict[Kind, RecordKind] = {
    "observations": "observation",
    "sessions": "summary",
    "prompts": "prompt",
}
TITLE_CHARS = 160

_COLUMNS: dict[Kind, tuple[str, str]] = {
    "observations": (
        "observations",
        "id, type, title, subtitle, narrative, facts, concepts, files_read, files_modified,"
        " project, created_at, created_at_epoch, content_session_id, prompt_number,"
        " platform_source",
    ),
    "sessions": (
        "session_summaries",
        "id, request, investigated, learned, completed, next_steps, notes, files_read,"
        " files_edited, project, created_at, created_at_epoch, content_session_id, prompt_number",
    ),
    "prompts": (
        "user_prompts",
        "id, prompt_text, project, created_at, created_at_epoch, content_session_id, prompt_number",
    ),
}


class RecordRef(BaseModel):
    """One record in an index: enough to decide whether to fetch it, and what that costs."""

    id: int
    kind: RecordKind
    type: str  # the observation type, or "summary" / "prompt"
    title: str
    subtitle: str = ""
    project: str
    created_at: str
    created_at_epoch: int
    tokens: int  # estimated tokens of the full record
    content_session_id: str | None = None
    prompt_number: int = 0
    platform_source: str | None = None  # observations only (the others have no column)
    # Observations only (``workbench.staleness``): a cited file changed since it was made;
    # None when unknown (no evidence recorded, or not an observation).
    stale: bool | None = None
    stale_files: list[str] | None = None  # the cited files that changed (when stale)


class SearchHit(RecordRef):
    score: float
    ranks: dict[str, int] = Field(default_factory=dict)  # ranker name -> 1-based rank
    # Which rankers found this hit: "fts" (BM25) and/or "vector" (whatever the model).
    rankers: list[str] = Field(default_factory=list)
    # The second stage that placed it ("features", "features-default", "claude"); None: fused.
    rerank: str | None = None


class TimelineItem(RecordRef):
    is_anchor: bool = False


def first_line(text: str, limit: int = TITLE_CHARS) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters with an ellipsis."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


# Positions in ``_COLUMNS``' lists: rows are read as plain tuples (no name lookups per field).
_ID, _PROJECT_AT = 0, {"observations": 9, "sessions": 9, "prompts": 2}


def _ref(kind: Kind, row: tuple[Any, ...]) -> dict[str, Any]:
    """The index fields of one row of ``_COLUMNS[kind]`` (a tuple, in that column order)."""
    at = _PROJECT_AT[kind]  # project, created_at, created_at_epoch, session, prompt number
    common = {
        "id": row[_ID],
        "kind": KIND_OF[kind],
        "project": row[at],
        "created_at": row[at + 1],
        "created_at_epoch": row[at + 2],
        "content_session_id": row[at + 3],
        "prompt_number": row[at + 4],
    }
    if kind == "observations":
        # type, title, subtitle, narrative, facts, concepts, files_read, files_modified
        _, type_, title, subtitle, narrative, facts, concepts, read, modified = row[:9]
        body = [title, subtitle, narrative, facts, concepts, read, modified]
        return {
            **common,
            "type": type_,
            "title": title,
            "subtitle": subtitle,
            "platform_source": row[14],
            "tokens": estimate_tokens("\n".join(body)),
        }
    if kind == "sessions":
        # request, investigated, learned, completed, next_steps, notes, files_read, files_edited
        texts = list(row[1:9])
        request, _, learned, completed = texts[:4]
        return {
            **common,
            "type": "summary",
            "title": first_line(request) or first_line(completed) or "(summary)",
            "subtitle": first_line(completed or learned),
            "tokens": estimate_tokens("\n".join(texts)),
        }
    text = row[1]
    return {
        **common,
        "type": "prompt",
        "title": first_line(text) or "(prompt)",
        "subtitle": f"prompt {row[at + 4]}",
        "tokens": estimate_tokens(text),
    }


def load(conn: sqlite3.Connection, kind: Kind, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The index fields of each id (unknown ids are absent); build hits or items from them."""
    if not ids:
        return {}
    table, columns = _COLUMNS[kind]
    found: dict[int, dict[str, Any]] = {}
    unique = list(dict.fromkeys(int(i) for i in ids))
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples, whatever the connection's row factory
    for start in range(0, len(unique), 500):  # SQLite caps host parameters
        chunk = unique[start : start + 500]
        sql = f"SELECT {columns} FROM {table} WHERE id IN ({', '.join('?' * len(chunk))})"
        for row in cursor.execute(sql, chunk):
            found[int(row[_ID])] = _ref(kind, row)
    return found


Model = TypeVar("Model", bound=BaseModel)
_PLAIN = (str, int, float, bool, type(None))
# Per model and key order of the values given: ``(the fields to set and their plain defaults,
# or None when model_construct itself must build it,)``. A page's hits give one key order.
_plans: dict[tuple[type[BaseModel], tuple[str, ...]], tuple[dict[str, Any] | None]] = {}
_PLANS_MAX = 256


def construct(cls: type[Model], values: dict[str, Any]) -> Model:
    """``cls.model_construct(**values)``, built directly when it can be (the same object).

    Why: a search page builds up to 300 hits, and ``model_construct`` looks up every field's
    default on every call (~15 µs a hit on a loaded box, a millisecond a page). Here the
    fields' plain defaults (``None``, ``""``, ``0``: immutable, so sharing them is what
    ``model_construct`` does too) are read once per class, and whether the values can be set
    directly once per class and key order (the checks cost as much as the build). Values
    naming a field that has a factory default, or no field at all, take ``model_construct``
    itself. The fields set are the ones given, in the model's field order, as
    ``model_construct`` sets them.
    """
    key = (cls, tuple(values))
    found = _plans.get(key)  # one lookup: another thread may clear the dict meanwhile
    if found is None:
        found = (_plan(cls, key[1]),)
        if len(_plans) >= _PLANS_MAX:
            _plans.clear()
        _plans[key] = found
    plan = found[0]
    if plan is None:
        return cls.model_construct(**values)
    hit = cls.__new__(cls)
    data = {name: values[name] if name in values else default for name, default in plan.items()}
    object.__setattr__(hit, "__dict__", data)
    object.__setattr__(hit, "__pydantic_fields_set__", set(values))
    object.__setattr__(hit, "__pydantic_extra__", None)
    object.__setattr__(hit, "__pydantic_private__", None)
    return hit


def _plan(cls: type[BaseModel], given: tuple[str, ...]) -> dict[str, Any] | None:
    """Every field of ``cls`` -> its plain default (None when it has none: then it is given),
    in field order; or None when values with these keys must go through ``model_construct``."""
    fields = cls.model_fields
    defaults = {
        name: field.default
        for name, field in fields.items()
        if field.default_factory is None and isinstance(field.default, _PLAIN)
    }
    plain_model = (
        cls.__pydantic_post_init__ is None
        and not cls.__private_attributes__
        and cls.model_config.get("extra") != "allow"
    )
    if (
        not plain_model
        or not all(name in given or name in defaults for name in fields)
        or any(name not in fields for name in given)
    ):
        return None
    return {name: defaults.get(name) for name in fields}


def epochs(conn: sqlite3.Connection, kind: Kind, ids: Sequence[int]) -> dict[int, int]:
    """``id -> created_at_epoch`` (to date-order a candidate pool without loading its text)."""
    table = _COLUMNS[kind][0]
    out: dict[int, int] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        sql = (
            f"SELECT id, created_at_epoch FROM {table} WHERE id IN ({', '.join('?' * len(chunk))})"
        )
        out.update((int(r[0]), int(r[1])) for r in conn.execute(sql, chunk))
    return out


def table_of(kind: Kind) -> str:
    return _COLUMNS[kind][0]
