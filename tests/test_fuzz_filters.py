"""Fuzz: one filter value, two compilers (SQLite and DuckDB) that must select the same rows.

``SearchFilters`` is compiled to SQLite by itself (``table_sql``) and to DuckDB by
``workbench/recall/filters_duckdb.py`` (the team lake and the analytics views). Both run here
over one real store: SQLite on its tables, DuckDB on the views ``store/duck`` lays over the
same file. For any filter the two must return the same ids, observations and summaries alike.
And the filter a search request carries (built once, when the request is validated) must be
the value ``SearchFilters`` itself would build from the same fields.

Concepts include non-ASCII letters (``CAFÉ``): SQLite's ``lower()`` folds ASCII only, so the
store's compiler lowers a non-ASCII concept with Python's ``str.lower`` as DuckDB does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import locally_filtered
from tests.fuzz_harness import budget
from workbench.errors import InvalidInput
from workbench.recall import filters_duckdb
from workbench.recall.filters import Kind, SearchFilters
from workbench.recall.search_query import SearchQuery

pytestmark = pytest.mark.slow

DAY = 86_400_000
T = 1_780_000_000_000
SEGMENTS = ["src", "payments", "pay", "lib", "a b", "x%_", "ü"]
CONCEPTS = ["Cache", "cache", " ledger ", "LEDGER", "x", "a b", "CAFÉ", "café", "Ærø", "ÆRØ"]
PLATFORMS = ["claude-code", "gemini-cli", "codex-cli"]


def _prefix() -> st.SearchStrategy[str]:
    parts = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3).map("/".join)
    ends = st.sampled_from(["", "", "/"])
    return st.tuples(st.sampled_from(["", "/", "./", "/home/me/"]), parts, ends).map("".join)


@pytest.fixture(scope="module")
def store_and_duck(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    """A store of varied rows (seeded deterministically), and DuckDB's views over it."""
    import random

    from workbench.models import ObservationDraft, SummaryDraft
    from workbench.store import duck, observations, sessions, summaries
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    rng = random.Random(23)

    def paths() -> list[str]:
        return [
            rng.choice(["", "/", "/home/me/"])
            + "/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 4)))
            for _ in range(rng.randint(0, 3))
        ]

    folder = tmp_path_factory.mktemp("filters")
    db = folder / "workbench.db"
    with Store(db) as store, atomic(store.conn):
        for s in range(6):
            session = f"s{s}"
            project = ["api", "web"][s % 2]
            sessions.ensure(store.conn, session, project, PLATFORMS[s % 3], at_ms=T + s * DAY)
            for i in range(8):
                observations.insert(
                    store.conn,
                    ObservationDraft(
                        type=rng.choice(["bugfix", "feature", "discovery", "change"]),
                        title=f"o{s}-{i}",
                        narrative=f"n{s}-{i}",
                        concepts=rng.sample(CONCEPTS, rng.randint(0, 3)),
                        files_read=paths(),
                        files_modified=paths(),
                    ),
                    content_session_id=session,
                    project=project,
                    prompt_number=i + 1,
                    created_ms=T + s * DAY + i * 3_600_000,
                )
                summaries.upsert(
                    store.conn,
                    SummaryDraft(
                        request=f"r{s}-{i}",
                        learned="l",
                        files_read=paths(),
                        files_edited=paths(),
                    ),
                    content_session_id=session,
                    project=project,
                    prompt_number=i + 1,
                    created_ms=T + s * DAY + i * 3_600_000,
                )
        for i in range(3):  # saved through an agent's MCP server: no session
            observations.insert(
                store.conn,
                ObservationDraft(title=f"m{i}", files_modified=paths()),
                content_session_id=None,
                project="api",
                prompt_number=0,
                created_ms=T + i * DAY,
                platform_source=PLATFORMS[i],
            )
    con = duck.connect(db, extension_dir=folder / "ext")
    try:
        yield db, con
    finally:
        con.close()


filter_fields = st.fixed_dictionaries(
    {},
    optional={
        "projects": st.lists(st.sampled_from(["api", "web", "nope"]), max_size=2),
        "obs_types": st.lists(st.sampled_from(["bugfix", "feature", "change"]), max_size=2),
        "concepts": st.lists(st.sampled_from(CONCEPTS), max_size=2),
        "files": st.lists(_prefix(), max_size=3),
        "date_start": st.integers(T - DAY, T + 7 * DAY),
        "date_end": st.integers(T - DAY, T + 7 * DAY),
        "platform_source": st.sampled_from(PLATFORMS),
    },
)


def _segment_match(path: str, prefix: str) -> bool:
    """The rule, written plainly: a prefix names whole path segments (a folder or a file);
    a relative one may start at any directory boundary."""
    folder = prefix if prefix.endswith("/") else prefix + "/"
    if path == prefix or path.startswith(folder):
        return True
    relative = not prefix.startswith("/")
    return relative and (path.endswith("/" + prefix) or "/" + folder in path)


def _expected_ids(db: Path, table: str, columns: tuple[str, str], prefixes: list[str]) -> set[int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(f"SELECT id, {columns[0]}, {columns[1]} FROM {table}").fetchall()
    finally:
        conn.close()
    return {
        row[0]
        for row in rows
        if any(
            _segment_match(path, prefix)
            for path in [*json.loads(row[1] or "[]"), *json.loads(row[2] or "[]")]
            for prefix in prefixes
        )
    }


@settings(max_examples=budget(300), deadline=None)
@given(prefixes=st.lists(_prefix(), min_size=1, max_size=3))
def test_a_files_prefix_matches_whole_path_segments_in_both_dialects(
    store_and_duck: tuple[Path, Any], prefixes: list[str]
) -> None:
    """``src/pay`` is not ``src/payments``: both compilers select what the plain rule does."""
    db, con = store_and_duck
    filters = SearchFilters(files=prefixes)
    relations = [
        (
            "observations",
            "observations",
            filters_duckdb.OBSERVATIONS,
            ("files_read", "files_modified"),
        ),
        (
            "session_summaries",
            "summaries",
            filters_duckdb.SUMMARIES,
            ("files_read", "files_edited"),
        ),
    ]
    for table, view, columns, stored in relations:
        expected = _expected_ids(db, table, stored, filters.files)
        clauses, params = filters_duckdb.where(filters, columns)
        where = " WHERE " + " AND ".join(clauses)
        duck_ids = {r[0] for r in con.execute(f"SELECT id FROM {view}{where}", params).fetchall()}
        assert _sqlite_ids(db, filters, table) == expected, (table, filters.files)
        assert duck_ids == expected, (table, filters.files)


def _sqlite_ids(db: Path, filters: SearchFilters, table: str) -> set[int]:
    return locally_filtered(db, filters, table, "id")


@settings(max_examples=budget(300), deadline=None)
@given(fields=filter_fields)
def test_sqlite_and_duckdb_select_the_same_rows(
    store_and_duck: tuple[Path, Any], fields: dict[str, Any]
) -> None:
    db, con = store_and_duck
    try:
        filters = SearchFilters(**fields)
    except InvalidInput:
        return  # dateStart after dateEnd: refused before any compiler runs
    relations: list[tuple[str, str, filters_duckdb.Columns, Kind]] = [
        ("observations", "observations", filters_duckdb.OBSERVATIONS, "observations"),
        ("session_summaries", "summaries", filters_duckdb.SUMMARIES, "sessions"),
    ]
    for table, view, columns, kind in relations:
        if not filters.applies_to(kind):
            continue
        clauses, params = filters_duckdb.where(filters, columns)
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        duck_ids = {r[0] for r in con.execute(f"SELECT id FROM {view}{where}", params).fetchall()}
        assert _sqlite_ids(db, filters, table) == duck_ids, (table, filters)


@pytest.mark.parametrize("asked", ["café", "CAFÉ", " Café "])
def test_a_non_ascii_concept_matches_in_any_case_in_both_dialects(
    store_and_duck: tuple[Path, Any], asked: str
) -> None:
    """``concepts=café`` finds a memory tagged ``CAFÉ`` on the store as on the lake."""
    db, con = store_and_duck
    filters = SearchFilters(concepts=[asked])
    clauses, params = filters_duckdb.where(filters)
    duck_ids = {
        r[0]
        for r in con.execute(
            f"SELECT id FROM observations WHERE {' AND '.join(clauses)}", params
        ).fetchall()
    }
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tagged = {
            r[0]
            for r in conn.execute(
                "SELECT o.id FROM observations o, json_each(o.concepts) c"
                " WHERE c.value IN ('CAFÉ', 'café')"
            )
        }
    finally:
        conn.close()

    assert tagged  # the seeded store holds both spellings
    assert _sqlite_ids(db, filters, "observations") == tagged == duck_ids


request_fields = st.fixed_dictionaries(
    {},
    optional={
        "project": st.sampled_from(["api", " api ", "", "web"]),
        "projects": st.sampled_from(["api,web", '["a","b"]', "", "a,,a"]),
        "types": st.sampled_from(["bugfix", "Bugfix,bugfix", "feature,change", ""]),
        "concepts": st.sampled_from(["Cache", "a, b", '["x"]', ""]),
        "files": st.sampled_from(["./src", "src/payments,/abs", "./", " lib "]),
        "since": st.sampled_from(["2026-05-01", "2026-05-28T10:00:00Z", "1780000000000", ""]),
        "until": st.sampled_from(["2026-05-30", "2026-06-01T00:00:00Z", ""]),
        "platform_source": st.sampled_from(PLATFORMS + [""]),
    },
)


@settings(max_examples=budget(200), deadline=None)
@given(fields=request_fields)
def test_a_request_carries_the_filter_search_filters_would_build(fields: dict[str, Any]) -> None:
    try:
        request = SearchQuery.parse(fields)
    except InvalidInput:
        return  # since after until: refused at the edge
    expected = SearchFilters(
        project=fields.get("project"),
        projects=fields.get("projects"),
        obs_types=fields.get("types"),
        concepts=fields.get("concepts"),
        files=fields.get("files"),
        date_start=fields.get("since"),
        date_end=fields.get("until"),
        platform_source=fields.get("platform_source") or None,
    )

    built = request.filters()

    assert built is request.filters()  # built once, handed on as it is
    assert built.model_dump() == expected.model_dump() | {
        "obs_types": list(dict.fromkeys(expected.obs_types))
    }
