"""What a corpus is built from: the filter, its validation, and the observations it selects.

The filter is stored in the corpus file and re-run by ``rebuild``, so it is kept exactly in
the wire form a person or an agent sent (``project``, ``types``, ``concepts``, ``files``,
``query``, ``dateStart``, ``dateEnd``, ``platformSource``, ``limit``), after validation:

- list-valued filters accept an array, a JSON-array string or a comma-separated string (the
  recall filters' ``coerce_list``, so the corpus API, search, CLI and MCP agree);
- ``types`` is whitelisted to the observation types; ``limit`` is a positive integer
  (default 500, at most ``MAX_LIMIT``); dates are ISO dates or timestamps;
- ``platformSource`` (``platform_source`` is accepted too, stored as ``platformSource``) is
  one agent platform of ``workbench.platforms``; any other is a 422 listing the known ones;
- every bad value is an ``InvalidInput`` (HTTP 400) naming the field, the rule and an
  example; nothing is silently dropped or fixed.

Selection reuses ``SearchFilters`` (the same SQL as search) and, with a ``query``, the hybrid
``SearchEngine``. Under the limit, a filter-only corpus keeps the **newest** matches (so a
rebuild always picks up new work) and a query corpus keeps the most relevant; either way the
corpus lists them **oldest first**, the order in which the history happened.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workbench.errors import InvalidInput
from workbench.platform_filter import check_platform
from workbench.recall.filters import SearchFilters, coerce_list, observation_types
from workbench.store import observations

DEFAULT_LIMIT = 500
MAX_LIMIT = 10_000
MAX_QUERY_CHARS = 1_000
FILTER_KEYS = (
    "project",
    "types",
    "concepts",
    "files",
    "query",
    "dateStart",
    "dateEnd",
    "platformSource",
    "limit",
    "team",
)
# Other spellings a client may send -> the stored wire name (search takes both).
FILTER_ALIASES = {"platform_source": "platformSource"}
SEARCH_PAGE = 100  # the search engine's largest page
CORPUS_COLUMNS = (
    "id",
    "type",
    "title",
    "subtitle",
    "narrative",
    "facts",
    "concepts",
    "files_read",
    "files_modified",
    "project",
    "created_at",
    "created_at_epoch",
)
_COLUMNS = ", ".join(CORPUS_COLUMNS)

# (query, filters, limit) -> observation ids, most relevant first
SearchFn = Callable[[str, SearchFilters, int], list[int]]


class CorpusFilter(BaseModel):
    """A validated corpus filter, in the wire form stored in the corpus file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    project: str | None = None
    types: list[str] = Field(default_factory=list)
    concepts: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    query: str | None = None
    dateStart: str | int | None = None  # the wire name (camelCase)
    dateEnd: str | int | None = None  # the wire name (camelCase)
    platformSource: str | None = None  # the wire name (camelCase)
    limit: int = DEFAULT_LIMIT
    team: bool = False  # also the team lake's observations (workbench/team/read.py)

    def search_filters(self) -> SearchFilters:
        """The recall filters this corpus means (raises ``InvalidInput`` for bad dates)."""
        return SearchFilters(
            project=self.project,
            obs_types=self.types,
            concepts=self.concepts,
            files=self.files,
            date_start=self.dateStart,
            date_end=self.dateEnd,
            platform_source=self.platformSource,
        )

    def describe(self) -> str:
        """One line for people and the system prompt, e.g. ``project=api; types=bugfix``."""
        parts = [
            f"{key}={', '.join(value) if isinstance(value, list) else value}"
            for key, value in self.model_dump().items()
            if key not in ("limit", "team") and value not in (None, [], "")
        ]
        if self.team:
            parts.append("team=yes")
        parts.append(f"limit={self.limit}")
        return "; ".join(parts)


def parse_filter(data: Mapping[str, Any]) -> CorpusFilter:
    """Validate a filter from an HTTP body, a CLI, an MCP call or a stored corpus."""
    unknown = sorted(set(data) - set(FILTER_KEYS) - set(FILTER_ALIASES))
    if unknown:
        raise InvalidInput(
            f"unknown corpus filter {', '.join(repr(k) for k in unknown)}; the filters are "
            f'{", ".join(FILTER_KEYS)} (e.g. {{"project": "api", "types": "bugfix"}})'
        )
    data = _canonical_keys(data)
    parsed = CorpusFilter(
        project=_text(data.get("project"), "project", 200),
        types=_types(data.get("types")),
        concepts=coerce_list(data.get("concepts"), "concepts"),
        files=coerce_list(data.get("files"), "files"),
        query=_text(data.get("query"), "query", MAX_QUERY_CHARS),
        dateStart=_date(data.get("dateStart"), "dateStart"),
        dateEnd=_date(data.get("dateEnd"), "dateEnd"),
        platformSource=check_platform(data.get("platformSource"), "platformSource"),
        limit=parse_limit(data.get("limit")),
        team=_flag(data.get("team"), "team"),
    )
    parsed.search_filters()  # dates parse, and dateStart is not after dateEnd
    return parsed


def _flag(value: Any, name: str) -> bool:
    """A JSON boolean (absent or null: false); anything else is refused, not guessed."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false, got {value!r}")
    return value


def _canonical_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """``platform_source`` → ``platformSource``; both spellings at once must agree."""
    out = dict(data)
    for alias, name in FILTER_ALIASES.items():
        if alias not in out:
            continue
        value = out.pop(alias)
        if name in out and out[name] != value:
            raise InvalidInput(
                f"{alias}={value!r} and {name}={out[name]!r} disagree; send only {name}"
            )
        out[name] = value
    return out


def parse_limit(value: Any) -> int:
    """A positive integer (``"50"`` from a query string or CLI counts); None → the default."""
    if value is None:
        return DEFAULT_LIMIT
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        digits = text.removeprefix("-")
        if digits.isascii() and digits.isdigit():  # "¹" passes isdigit(), not int()
            number = int(text)
    if number is None or not 1 <= number <= MAX_LIMIT:
        raise InvalidInput(
            f"limit must be a positive integer from 1 to {MAX_LIMIT}, got {value!r}; "
            f"e.g. limit={DEFAULT_LIMIT} (the default)"
        )
    return number


def select(
    conn: sqlite3.Connection, flt: CorpusFilter, search: SearchFn | None = None
) -> list[dict[str, Any]]:
    """The observations ``flt`` selects, oldest first, as rows of ``CORPUS_COLUMNS``.

    Plain rows rather than ``Observation`` models: a corpus keeps only these fields, and
    validating each row twice (store model, then corpus model) was a third of a 2,000-row
    build.
    """
    filters = flt.search_filters()
    if flt.query:
        if search is None:
            search = default_search(conn)
        ids = list(dict.fromkeys(search(flt.query, filters, flt.limit)))[: flt.limit]
        rows: list[dict[str, Any]] = []
        for start in range(0, len(ids), 500):  # SQLite caps host parameters
            chunk = ids[start : start + 500]
            sql = f"SELECT {_COLUMNS} FROM observations WHERE id IN ({','.join('?' * len(chunk))})"
            rows.extend(_rows(conn.execute(sql, chunk)))
        return sorted(rows, key=lambda r: (r["created_at_epoch"], r["id"]))
    clauses, params = filters.observation_sql("o")
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    sql = (
        f"SELECT {_COLUMNS} FROM (SELECT o.* FROM observations o"
        f"{where} ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT ?)"
        " ORDER BY created_at_epoch ASC, id ASC"
    )
    return _rows(conn.execute(sql, [*params, flt.limit]))


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    out = []
    for row in cursor:
        data = dict(zip(CORPUS_COLUMNS, row, strict=True))
        for name in observations.JSON_FIELDS:
            data[name] = json.loads(data[name])
        out.append(data)
    return out


def default_search(conn: sqlite3.Connection, settings: Any = None, ranker: Any = None) -> SearchFn:
    """Hybrid search over ``conn`` (full text only when no vector ranker is given)."""
    from workbench.recall.search import SearchEngine

    engine = SearchEngine(conn, settings, ranker)

    def run(query: str, filters: SearchFilters, limit: int) -> list[int]:
        ids: list[int] = []
        # The engine pages at most SEARCH_PAGE hits at a time; a corpus may want more.
        for offset in range(0, limit, SEARCH_PAGE):
            result = engine.search(
                query,
                filters,
                types="observations",
                mode="hybrid",
                limit=min(SEARCH_PAGE, limit - offset),
                offset=offset,
            )
            ids.extend(hit.id for hit in result.observations)
            if len(result.observations) < SEARCH_PAGE:
                break
        return list(dict.fromkeys(ids))

    return run


def _text(value: Any, field: str, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f'{field} must be text, got {value!r}; e.g. {field}="…"')
    text = value.strip()
    if len(text) > limit:
        raise InvalidInput(f"{field} is {len(text)} characters; at most {limit} are allowed")
    return text or None


def _types(value: Any) -> list[str]:
    return observation_types(value, "types", "bugfix,decision")


def _date(value: Any, field: str) -> str | int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidInput(
            f"{field} must be an ISO date or timestamp, got {value!r}; "
            f"e.g. {field}=2026-12-01 or {field}=2026-12-01T14:30:00Z"
        )
    return value.strip() if isinstance(value, str) else value
