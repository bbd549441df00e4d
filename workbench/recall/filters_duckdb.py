"""The DuckDB dialect of ``SearchFilters``: the one compiler for every DuckDB read.

Two kinds of relation are filtered in DuckDB: the team lake's tables (``team/read.py``, list
columns are ``VARCHAR[]``) and the analytics views over the local store (``store/duck``,
``knowledge/stats.py``'s ``Scope``). Both take their WHERE clauses from ``where`` below, so a
filter means there what it means in SQLite (``SearchFilters.observation_sql``):

- ``files``: whole leading path segments of any entry of the file columns (``src/pay`` is
  not ``src/payments``); a relative prefix (``src/payments``) also matches at any directory
  boundary (``/home/me/app/src/payments/x.py``);
- ``concepts``: any of them, compared lowercased and trimmed;
- ``project_key``: the relations here carry no project key, so the project names apply alone.

``tests/test_filter_dialects.py`` runs one filter through both compilers over a real team
lake and the store it was published from; ``tests/test_fuzz_filters.py`` does it for random
filters and rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.recall.filters import SearchFilters, folder_form


@dataclass(frozen=True)
class Columns:
    """The columns of the relation being filtered; ``None`` where it has none (the filter on
    that column is then not expressed: the caller decides whether it can apply)."""

    epoch: str = "created_at_epoch"
    project: str | None = "project"
    platform: str | None = "platform_source"
    type: str | None = "type"
    concepts: str | None = "concepts"
    files: tuple[str, ...] = ("files_read", "files_modified")


OBSERVATIONS = Columns()
SUMMARIES = Columns(type=None, concepts=None, files=("files_read", "files_edited"))


def where(filters: SearchFilters, columns: Columns = OBSERVATIONS) -> tuple[list[str], list[Any]]:
    """WHERE fragments (AND-ed by the caller) and their parameters, in DuckDB's dialect."""
    clauses: list[str] = []
    params: list[Any] = []
    projects = filters.all_projects
    if projects and columns.project:
        clauses.append(f"{columns.project} IN ({_marks(projects)})")
        params.extend(projects)
    if filters.platform_source and columns.platform:
        clauses.append(f"{columns.platform} = ?")
        params.append(filters.platform_source)
    if filters.obs_types and columns.type:
        clauses.append(f"{columns.type} IN ({_marks(filters.obs_types)})")
        params.extend(filters.obs_types)
    if filters.concepts and columns.concepts:
        clauses.append(f"list_has_any(list_transform({columns.concepts}, c -> lower(trim(c))), ?)")
        params.append([c.strip().lower() for c in filters.concepts])
    if filters.files and columns.files:
        listed = columns.files[0]
        for column in columns.files[1:]:
            listed = f"list_concat({listed}, {column})"
        tests: list[str] = []
        for prefix in filters.files:
            folder = folder_form(prefix)
            test = "f = ? OR starts_with(f, ?)"
            params.extend([prefix, folder])
            if not prefix.startswith("/"):
                test += " OR ends_with(f, ?) OR contains(f, ?)"
                params.extend(["/" + prefix, "/" + folder])
            tests.append(f"({test})")
        clauses.append(f"len(list_filter({listed}, f -> {' OR '.join(tests)})) > 0")
    if filters.date_start is not None:
        clauses.append(f"{columns.epoch} >= ?")
        params.append(filters.date_start)
    if filters.date_end is not None:
        clauses.append(f"{columns.epoch} <= ?")
        params.append(filters.date_end)
    return clauses, params


def _marks(values: list[Any]) -> str:
    return ", ".join("?" * len(values))
