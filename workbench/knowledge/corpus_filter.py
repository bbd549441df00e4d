"""What a corpus is built from: the filter, its validation, and the observations it selects.

The filter is ``CorpusFilter``, built on the search contract's ``RecallFilter``
(``workbench.recall.search_query``): the same fields with the same names and rules as
``/api/search``, ``workbench search`` and the MCP ``search`` tool (``project``, ``types``,
``concepts``, ``files``, ``query``, ``since``, ``until``, ``platform_source``, ``team``), plus
a corpus ``limit`` (default 500, at most ``MAX_LIMIT``). It is stored in the corpus file in
that form and re-run by ``rebuild``. The old spellings (``dateStart``, ``dateEnd``,
``platformSource``…) are still read, from a client for one release (with a deprecation
notice) and from corpus files written before (silently: the file is rewritten in the new
form on the next rebuild).

- list-valued filters accept an array, a JSON-array string or a comma-separated string;
- ``types`` is whitelisted to the observation types; ``limit`` is a positive integer;
  dates are ISO dates or timestamps; ``platform_source`` is one agent platform of
  ``workbench.platforms`` (any other is a 422 listing the known ones);
- every bad value is an ``InvalidInput`` (HTTP 400) naming the field, the rule and an
  example; nothing is silently dropped or fixed.

What a filter selects is ``workbench.sources.select``'s job (the same ``SearchFilters`` SQL as
search, the hybrid ``SearchEngine`` for a ``query``; the team lake under the same value).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, field_validator

from workbench.errors import InvalidInput
from workbench.recall.filters import SearchFilters
from workbench.recall.search_query import LEGACY_NAMES, RecallFilter
from workbench.sources.select import LocalRows, SearchFn, SelectAsk

DEFAULT_LIMIT = 500
MAX_LIMIT = 10_000
MAX_QUERY_CHARS = 1_000


class CorpusFilter(RecallFilter):
    """A validated corpus filter: the search fields plus how many observations to keep."""

    example: ClassVar[str] = '{"project": "api", "types": "bugfix"}'

    limit: Annotated[
        int,
        Field(ge=1, le=MAX_LIMIT, description=f"At most this many (default {DEFAULT_LIMIT})."),
    ] = DEFAULT_LIMIT

    @field_validator("query", "project", mode="before")
    @classmethod
    def _text(cls, value: Any, info: Any) -> str | None:
        """Text, trimmed; a corpus query is shorter than a search's (it primes an agent)."""
        limit = MAX_QUERY_CHARS if info.field_name == "query" else 200
        if value is None:
            return None
        if not isinstance(value, str):
            raise InvalidInput(
                f'{info.field_name} must be text, got {value!r}; e.g. {info.field_name}="…"'
            )
        text = value.strip()
        if len(text) > limit:
            raise InvalidInput(
                f"{info.field_name} is {len(text)} characters; at most {limit} are allowed"
            )
        return text or None

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, value: Any) -> int:
        return parse_limit(value)

    @field_validator("team", mode="before")
    @classmethod
    def _team(cls, value: Any) -> bool:
        """A JSON boolean (absent or null: false); anything else is refused, not guessed."""
        if value is None:
            return False
        if not isinstance(value, bool):
            raise InvalidInput(f"team must be true or false, got {value!r}")
        return value

    def search_filters(self) -> SearchFilters:
        """The recall filters this corpus means."""
        return self.filters()

    def selection(self) -> SelectAsk:
        """What this corpus asks its source to select (``workbench.sources.select``)."""
        return SelectAsk(self.filters(), self.query, self.limit)

    def describe(self) -> str:
        """One line for people and the system prompt, e.g. ``project=api; types=bugfix``."""
        parts = [
            f"{key}={', '.join(value) if isinstance(value, list) else value}"
            for key, value in self.model_dump().items()
            if key not in ("limit", "team") and value not in (None, [], "", False)
        ]
        if self.team:
            parts.append("team=yes")
        parts.append(f"limit={self.limit}")
        return "; ".join(parts)


def parse_filter(data: Mapping[str, Any]) -> CorpusFilter:
    """Validate a filter from an HTTP body, a CLI, an MCP call or a stored corpus.

    Old spellings are read (``parsed.deprecations()`` says which); an unknown key is refused
    with the list of filters.
    """
    fields = set(CorpusFilter.model_fields)
    unknown = sorted(set(data) - fields - {k for k, v in LEGACY_NAMES.items() if v in fields})
    if unknown:
        raise InvalidInput(
            f"unknown corpus filter {', '.join(repr(k) for k in unknown)}; the filters are "
            f"{', '.join(CorpusFilter.model_fields)} (e.g. {CorpusFilter.example})"
        )
    return CorpusFilter.parse(data)


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
    """This store's observations ``flt`` selects, oldest first (the notebooks' call; the team
    lake is ``corpus.source_for``'s), as rows of ``sources.select.CORPUS_COLUMNS``."""
    return LocalRows(conn, search).select(flt.selection())
