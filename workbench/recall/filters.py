"""The filters every ranker honours, and the SQL that applies them.

One model so the full-text ranker, the vector ranker (through the allowed-id set), the
filtered listing, the HTTP API, the CLI and the MCP tools all agree on what ``types`` or
``files`` means, and all reject a bad value with the same message.

- ``project`` / ``projects``: exact project names (any of them).
- ``project_key``: one project's key (``workbench.locate.project_identity``): "this folder's
  project", which two folders of one name (``clientA/api``, ``clientB/api``) do not share.
- ``obs_types``: observation types, whitelisted to ``OBSERVATION_TYPES``.
- ``concepts``: any of these concepts (case-insensitive in all of Unicode, ``café`` finds
  ``CAFÉ``; surrounding spaces ignored).
- ``files``: a *path prefix* of whole segments matched against every entry of ``files_read``
  and ``files_modified`` (summaries: ``files_read`` and ``files_edited``): the prefix itself
  (a file) or anything under it (a folder), so ``src/pay`` is not ``src/payments``. An
  absolute prefix (``/home/me/app/src``) must match from the start; a relative one
  (``src/payments``) may also match at any directory boundary, because stored paths are
  usually absolute while people type them relative to the project.
- ``date_start`` / ``date_end``: ISO dates or timestamps (or epoch milliseconds). A plain date
  as ``date_end`` includes that whole day (UTC).
- ``platform_source``: the session's platform (``claude-code``…), joined through ``sessions``.

List values accept a list, a JSON-array string or a comma-separated string, so query strings,
CLI options and MCP arguments all work. A bad value raises ``InvalidInput`` naming the
parameter, the rule and an example; constructing the model never raises anything else.

A filter that cannot apply to a kind of record excludes that kind: a prompt is never a
``bugfix``, so ``obs_types=bugfix`` returns no prompts (see ``applies_to``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from workbench.bounds import EPOCH_MS_MAX, EPOCH_MS_MIN
from workbench.clock import ms_from_iso
from workbench.errors import InvalidInput
from workbench.locate import MAX_PROJECT_KEY_CHARS
from workbench.models import OBSERVATION_TYPES
from workbench.platform_filter import check_platform
from workbench.redact import replace_surrogates
from workbench.store.connection import LOWER_FUNCTION

Kind = Literal["observations", "sessions", "prompts"]
MAX_LIST_ITEMS = 50
DAY_MS = 86_400_000


@dataclass(frozen=True)
class Table:
    """What the SQLite compiler needs to know of one store table."""

    kind: Kind | None  # the search kind it holds (None: ``sessions``, listed but not searched)
    files: tuple[str, ...] = ()  # the JSON columns holding file paths
    epoch: str = "created_at_epoch"  # the time the date filters bound
    platform_column: bool = False  # it has its own ``platform_source`` column


TABLES: dict[str, Table] = {
    "observations": Table("observations", ("files_read", "files_modified"), platform_column=True),
    "session_summaries": Table("sessions", ("files_read", "files_edited")),
    "user_prompts": Table("prompts"),
    "sessions": Table(None, epoch="started_at_epoch", platform_column=True),
}
KIND_TABLES: dict[str, str] = {
    "observations": "observations",
    "sessions": "session_summaries",
    "prompts": "user_prompts",
}


def filter_list(value: Any, param: str) -> list[str]:
    """``coerce_list`` for a filter field; ``files`` prefixes lose a leading ``./`` (a path
    relative to the project root is stored without it), and an emptied prefix is dropped."""
    items = coerce_list(value, param)
    if param == "files":
        items = [p[2:] if p.startswith("./") else p for p in items]
        items = [p for p in items if p]
    return items


def coerce_list(value: Any, param: str) -> list[str]:
    """``["a", "b"]``, ``'["a","b"]'``, ``"a,b"`` or repeated keys (``["a,b", "c"]``) → a list.

    Blank items are dropped and duplicates removed (first one wins), so ``a,,a`` is ``[a]``.
    """
    if value is None:
        return []
    items = value if isinstance(value, list | tuple | set | frozenset) else [value]
    out: list[str] = []
    for item in items:
        if item is None:
            continue
        if not isinstance(item, str):
            raise InvalidInput(
                f"{param} must be text or a list of text, got {item!r}; "
                f'e.g. {param}=a,b or {param}=["a","b"]'
            )
        text = item.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                raise InvalidInput(
                    f"{param} looks like a JSON array but is not valid JSON: {text[:80]!r}; "
                    f'e.g. {param}=["a","b"] or {param}=a,b'
                ) from None
            if not isinstance(parsed, list) or not all(isinstance(p, str) for p in parsed):
                raise InvalidInput(
                    f'{param} must be a JSON array of strings, e.g. {param}=["a","b"]'
                )
            # A JSON escape can spell a lone surrogate (``["\\ud83d"]``) that no URL decoding
            # could: it becomes U+FFFD here, like every other text at the boundary.
            parts = [replace_surrogates(p) for p in parsed]
        else:
            parts = text.split(",")
        out.extend(p.strip() for p in parts if p.strip())
    unique = list(dict.fromkeys(out))
    if len(unique) > MAX_LIST_ITEMS:
        raise InvalidInput(f"{param} takes at most {MAX_LIST_ITEMS} values, got {len(unique)}")
    return unique


def parse_time(value: Any, param: str, *, end_of_day: bool = False) -> int | None:
    """An ISO date/timestamp or epoch milliseconds → epoch ms (None for empty).

    The one parser of wire dates (search, stats, corpora, the CLI), so each rule holds
    everywhere: epoch digits are ASCII (``"¹"`` passes ``str.isdigit()``, not ``int()``), and
    every value lies in the years 1–9999, which also keeps it inside SQLite's integers.

    ``end_of_day``: a plain date (``2026-12-01``) means the last millisecond of that day, so
    ``date_end=2026-12-01`` includes everything on the first of December.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise InvalidInput(f"{param} must be an ISO date or timestamp, got {value!r}")
    if isinstance(value, int):
        return _in_range(value, param)
    text = str(value).strip()
    if text.isascii() and text.isdigit():
        return _in_range(int(text), param)
    try:
        ms = ms_from_iso(text)
    except ValueError:
        raise InvalidInput(
            f"{param}={text[:80]!r} is not an ISO date or timestamp within the years 1–9999; "
            f"use e.g. {param}=2026-12-01 or {param}=2026-12-01T14:30:00Z"
        ) from None
    if end_of_day and len(text) == 10:  # YYYY-MM-DD (UTC midnight): the whole day
        return ms + DAY_MS - 1
    return ms


def _in_range(ms: int, param: str) -> int:
    if not EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX:
        raise InvalidInput(
            f"{param}={ms} is out of range: epoch milliseconds must be from {EPOCH_MS_MIN} to "
            f"{EPOCH_MS_MAX} (the years 1–9999); or give an ISO date, e.g. {param}=2026-12-01"
        )
    return ms


def observation_types(value: Any, param: str, example: str) -> list[str]:
    """A list param of observation types (list, JSON array or csv), lowercased, whitelisted.

    Shared by ``SearchQuery`` and ``CorpusFilter`` (``types``) and the engine's own filters.
    """
    items = [t.lower() for t in coerce_list(value, param)]
    unknown = [t for t in items if t not in OBSERVATION_TYPES]
    if unknown:
        raise InvalidInput(
            f"{param} {', '.join(repr(t) for t in unknown)} is not an observation type; "
            f"allowed: {', '.join(OBSERVATION_TYPES)} (e.g. {param}={example})"
        )
    return items


class SearchFilters(BaseModel):
    """What to restrict a search or listing to. Every field is optional; empty = unfiltered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    project: str | None = None
    projects: list[str] = []
    obs_types: list[str] = []
    concepts: list[str] = []
    files: list[str] = []
    date_start: int | None = None  # epoch ms, inclusive
    date_end: int | None = None  # epoch ms, inclusive
    platform_source: str | None = None
    project_key: str | None = Field(default=None, max_length=MAX_PROJECT_KEY_CHARS)

    def __init__(self, **data: Any) -> None:
        # Trigger: pydantic's own checks (an unknown field, a number where text belongs).
        # Why: callers (routes, CLI, MCP) handle one error type, WorkbenchError.
        # Outcome: every bad filter is an InvalidInput (HTTP 400) with a readable message.
        try:
            super().__init__(**data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'filters'}: {err['msg']}"
                for err in exc.errors()[:5]
            )
            raise InvalidInput(
                f"invalid search filter ({problems}); filters are "
                f"{', '.join(type(self).model_fields)}"
            ) from None

    # -- validation -------------------------------------------------------------------------
    @field_validator("project", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip() or None
        return value

    @field_validator("platform_source", mode="before")
    @classmethod
    def _known_platform(cls, value: Any) -> str | None:
        """A typo must not silently match nothing: 422 naming the known platforms."""
        return check_platform(value)

    @field_validator("projects", "concepts", "files", mode="before")
    @classmethod
    def _lists(cls, value: Any, info: Any) -> list[str]:
        return filter_list(value, info.field_name)

    @field_validator("obs_types", mode="before")
    @classmethod
    def _types(cls, value: Any) -> list[str]:
        return observation_types(value, "types", "bugfix,feature")

    @field_validator("date_start", mode="before")
    @classmethod
    def _start(cls, value: Any) -> int | None:
        return parse_time(value, "dateStart")

    @field_validator("date_end", mode="before")
    @classmethod
    def _end(cls, value: Any) -> int | None:
        return parse_time(value, "dateEnd", end_of_day=True)

    @model_validator(mode="after")
    def _range(self) -> SearchFilters:
        if self.date_start is not None and self.date_end is not None:
            if self.date_start > self.date_end:
                raise InvalidInput(
                    "dateStart is after dateEnd; give the earlier date first, e.g. "
                    "dateStart=2026-11-01&dateEnd=2026-11-30"
                )
        return self

    # -- meaning ----------------------------------------------------------------------------
    @property
    def all_projects(self) -> list[str]:
        return list(dict.fromkeys([*([self.project] if self.project else []), *self.projects]))

    def is_empty(self) -> bool:
        """True when nothing restricts the result (a query is then required): every field
        holds its default, so a field added later counts without being listed here."""
        return all(
            getattr(self, name) == field.default for name, field in type(self).model_fields.items()
        )

    def only_projects(self) -> bool:
        """True when a project (or several) is the only restriction (the vector index can
        filter by project itself, without an id list)."""
        return (
            bool(self.all_projects)
            and self.model_copy(update={"project": None, "projects": []}).is_empty()
        )

    def applies_to(self, kind: Kind) -> bool:
        """Can a record of ``kind`` satisfy these filters at all?"""
        if kind == "observations":
            return True
        if self.obs_types or self.concepts:
            return False
        return not (self.files and not TABLES[KIND_TABLES[kind]].files)

    # -- SQL: the one SQLite compiler (DuckDB's is ``recall.filters_duckdb``) ----------------
    def observation_sql(self, alias: str = "o") -> tuple[list[str], list[Any]]:
        """WHERE fragments (AND-ed by the caller) and their parameters for ``observations``."""
        return self.table_sql("observations", alias)

    def record_sql(self, kind: Kind, alias: str) -> tuple[list[str], list[Any]]:
        """WHERE fragments for ``session_summaries`` (kind ``sessions``) or ``user_prompts``.

        Call only when ``applies_to(kind)``; the observation-only filters are not expressed.
        """
        return self.table_sql(KIND_TABLES[kind], alias)

    def table_sql(self, table: str, alias: str) -> tuple[list[str], list[Any]]:
        """WHERE fragments for one of the store's ``TABLES`` (``alias`` names it in the
        query); a filter the table cannot hold (``files`` on ``sessions``) is not expressed."""
        spec = TABLES[table]
        clauses, params = self._common_sql(alias, spec)
        if spec.kind == "observations":
            if self.obs_types:
                clauses.append(f"{alias}.type IN ({_marks(self.obs_types)})")
                params.extend(self.obs_types)
            if self.concepts:
                clauses.append(self._concepts_sql(alias, params))
        file_sql, file_params = self._files_sql(alias, spec.files)
        return clauses + file_sql, params + file_params

    def _concepts_sql(self, alias: str, params: list[Any]) -> str:
        """Any concept, lowered and trimmed. SQLite's ``lower()`` folds ASCII only, DuckDB's
        all of Unicode: a non-ASCII concept is compared with the stored values whose UTF-8 is
        longer than their characters (non-ASCII), lowered by Python (``unicode_lower``); an
        ASCII one with SQLite's own ``lower()``, so the common case calls no Python per row.
        (A stored ASCII-folding letter such as the Kelvin sign is the one difference left.)"""
        wanted = list(dict.fromkeys(c.lower() for c in self.concepts))
        plain = [c for c in wanted if c.isascii()]
        other = [c for c in wanted if not c.isascii()]
        tests: list[str] = []
        if plain:
            tests.append(f"lower(trim(c.value)) IN ({_marks(plain)})")
            params.extend(plain)
        if other:
            tests.append(
                "(length(c.value) <> length(CAST(c.value AS BLOB))"
                f" AND {LOWER_FUNCTION}(trim(c.value)) IN ({_marks(other)}))"
            )
            params.extend(other)
        return f"EXISTS (SELECT 1 FROM json_each({alias}.concepts) c WHERE {' OR '.join(tests)})"

    def _common_sql(self, alias: str, spec: Table) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        projects = self.all_projects
        if self.project_key:
            # This folder's rows, and those keyed by a bare name of the filter (folder unknown:
            # ``recall.context.project_scope``).
            keys = [self.project_key, *(p for p in projects if p != self.project_key)]
            clauses.append(f"{alias}.project_key IN ({_marks(keys)})")
            params.extend(keys)
        if len(projects) == 1:
            clauses.append(f"{alias}.project = ?")
            params.append(projects[0])
        elif projects:
            clauses.append(f"{alias}.project IN ({_marks(projects)})")
            params.extend(projects)
        if self.date_start is not None:
            clauses.append(f"{alias}.{spec.epoch} >= ?")
            params.append(self.date_start)
        if self.date_end is not None:
            clauses.append(f"{alias}.{spec.epoch} <= ?")
            params.append(self.date_end)
        if self.platform_source and spec.platform_column:
            # An observation's own column: its session's platform, or, with no session (saved
            # through an MCP server), the saving agent's.
            clauses.append(f"{alias}.platform_source = ?")
            params.append(self.platform_source)
        elif self.platform_source:
            # sessions.content_session_id is UNIQUE, so this is one index probe per row.
            clauses.append(
                "EXISTS (SELECT 1 FROM sessions s WHERE s.content_session_id ="
                f" {alias}.content_session_id AND s.platform_source = ?)"
            )
            params.append(self.platform_source)
        return clauses, params

    def _files_sql(self, alias: str, columns: tuple[str, ...]) -> tuple[list[str], list[Any]]:
        if not self.files or not columns:
            return [], []
        tests: list[str] = []
        params: list[Any] = []
        for prefix in self.files:
            # substr() rather than LIKE: paths are case-sensitive and may contain % or _.
            folder = folder_form(prefix)
            test = "f.value = ? OR substr(f.value, 1, ?) = ?"
            params.extend([prefix, len(folder), folder])
            if not prefix.startswith("/"):
                test += " OR substr(f.value, -?) = ? OR instr(f.value, ?) > 0"
                params.extend([len(prefix) + 1, "/" + prefix, "/" + folder])
            tests.append(f"({test})")
        sources = " UNION ALL ".join(f"SELECT value FROM json_each({alias}.{c})" for c in columns)
        return [f"EXISTS (SELECT 1 FROM ({sources}) f WHERE {' OR '.join(tests)})"], params


def folder_form(prefix: str) -> str:
    """A ``files`` prefix as a folder (``src/payments`` → ``src/payments/``): a path under it
    starts with this, so ``src/pay`` never matches ``src/payments`` (both dialects use it)."""
    return prefix if prefix.endswith("/") else prefix + "/"


def _marks(values: list[Any]) -> str:
    return ", ".join("?" * len(values))
