"""polars statistics against hand-computed numbers on the fixed memory of ``analytics_data``.

Every expected value below is worked out in ``tests/analytics_data.py``'s docstring or next to
the assertion; the frames are compared whole (``to_dicts()``), not field by field.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests import analytics_data
from tests.analytics_data import ECONOMICS_BY_PROJECT, ECONOMICS_SUMMARY
from workbench.cli.analytics import Statistic
from workbench.errors import InvalidInput
from workbench.knowledge import reports, roi, stats
from workbench.knowledge.stats import Scope
from workbench.store import duck
from workbench.store.database import Store


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    path = tmp_path / "workbench.db"
    analytics_data.seed(path).close()
    connection = duck.connect(path)
    yield connection
    connection.close()


@pytest.fixture
def empty(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    path = tmp_path / "empty.db"
    Store(path).close()
    connection = duck.connect(path)
    yield connection
    connection.close()


def ts(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).replace(tzinfo=None)


T1, T2 = analytics_data.T1, analytics_data.T2
DAY1, DAY2 = dt.date(2023, 11, 14), dt.date(2023, 11, 16)


# ----- token economics ------------------------------------------------------------------------
def test_economics_per_project(con: duckdb.DuckDBPyConnection) -> None:
    frame = stats.economics(con)
    assert frame.to_dicts() == ECONOMICS_BY_PROJECT
    assert stats.economics_summary(frame) == ECONOMICS_SUMMARY


def test_economics_per_type_and_day(con: duckdb.DuckDBPyConnection) -> None:
    assert stats.economics(con, by="type").to_dicts() == [
        # feature: o1 (6, 100) + o3 (1, 0) → 100 * (1 - 7/100) = 93
        {"type": "feature", "observations": 2, "read_tokens": 7, "discovery_tokens": 100,
         "saved_tokens": 93, "savings_pct": 93.0},
        # bugfix: o2 (4, 20) → 100 * (1 - 4/20) = 80
        {"type": "bugfix", "observations": 1, "read_tokens": 4, "discovery_tokens": 20,
         "saved_tokens": 16, "savings_pct": 80.0},
    ]  # fmt: skip
    assert stats.economics(con, by="day").to_dicts() == [
        {"day": DAY1, "observations": 2, "read_tokens": 10, "discovery_tokens": 120,
         "saved_tokens": 110, "savings_pct": 91.67},
        {"day": DAY2, "observations": 1, "read_tokens": 1, "discovery_tokens": 0,
         "saved_tokens": -1, "savings_pct": None},
    ]  # fmt: skip
    for by in ("type", "day"):  # the totals do not depend on the grouping
        assert stats.economics_summary(stats.economics(con, by=by)) == ECONOMICS_SUMMARY


def test_economics_with_another_estimator(con: duckdb.DuckDBPyConnection) -> None:
    """An estimator gets the text (title, subtitle, narrative, facts joined by newlines)."""
    seen: list[str] = []

    def words(text: str) -> int:
        seen.append(text)
        return len(text.split())

    frame = stats.economics(con, by="type", estimator=words)
    # o1 "abcd\nef\nxxxxxxxxxx\n123\n45" → 5 words, o3 "q\n\n\nz" → 2;
    # o2 "tttttttt\n\nnnnnnnnn\n" → 2
    assert dict(zip(frame["type"], frame["read_tokens"], strict=True)) == {
        "feature": 7,
        "bugfix": 2,
    }
    assert "abcd\nef\nxxxxxxxxxx\n123\n45" in seen


def test_economics_scope(con: duckdb.DuckDBPyConnection) -> None:
    alpha = stats.economics(con, Scope.parse(project="alpha"))
    assert alpha.to_dicts() == ECONOMICS_BY_PROJECT[:1]
    # A plain end date includes that whole day; a start date starts at its midnight.
    first_day = stats.economics(con, Scope.parse(date_end="2023-11-14"))
    assert first_day.to_dicts() == ECONOMICS_BY_PROJECT[:1]
    last_day = stats.economics(con, Scope.parse(date_start="2023-11-16"))
    assert last_day.to_dicts() == ECONOMICS_BY_PROJECT[1:]
    # A timestamp end is exact: o1 (T1 + 60 s) is in, o2 (T1 + 120 s) is out.
    until = stats.economics(con, Scope.parse(date_end="2023-11-14T22:14:20Z"))
    assert until["read_tokens"].to_list() == [6]
    assert stats.economics(con, Scope.parse(project="nobody")).height == 0


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"date_start": "2023-11-16", "date_end": "2023-11-14"}, "dateStart is after dateEnd"),
        ({"date_start": "last tuesday"}, "dateStart='last tuesday' is not an ISO date"),
        ({"date_end": "2023-13-45"}, "dateEnd='2023-13-45' is not an ISO date"),
    ],
)
def test_bad_scope_is_refused_with_the_fix(kwargs: dict[str, str], words: str) -> None:
    with pytest.raises(InvalidInput, match=words):
        Scope.parse(**kwargs)


# ----- types and activity ---------------------------------------------------------------------
def test_types(con: duckdb.DuckDBPyConnection) -> None:
    assert stats.types(con).to_dicts() == [
        {"type": "feature", "observations": 2, "share_pct": 66.67, "discovery_tokens": 100,
         "projects": 2},
        {"type": "bugfix", "observations": 1, "share_pct": 33.33, "discovery_tokens": 20,
         "projects": 1},
    ]  # fmt: skip


def test_activity_per_day_and_project(con: duckdb.DuckDBPyConnection) -> None:
    # Day 1: s1 started, 2 prompts, o1 + o2, one summary; tokens 100 + 20 + 7 (summary) = 127.
    day1 = {"sessions": 1, "prompts": 2, "observations": 2, "summaries": 1, "discovery_tokens": 127}
    day2 = {"sessions": 1, "prompts": 1, "observations": 1, "summaries": 0, "discovery_tokens": 0}
    assert stats.activity(con).to_dicts() == [{"day": DAY1, **day1}, {"day": DAY2, **day2}]
    assert stats.activity(con, by="project").to_dicts() == [
        {"project": "alpha", **day1},
        {"project": "beta", **day2},
    ]
    assert stats.activity(con, Scope.parse(project="beta")).to_dicts() == [{"day": DAY2, **day2}]


# ----- files and concepts ---------------------------------------------------------------------
def test_top_files(con: duckdb.DuckDBPyConnection) -> None:
    assert stats.files(con).to_dicts() == [
        # a.py: read by o1, o2; modified by o1, o3
        {"file": "a.py", "reads": 2, "modifications": 2, "touches": 4,
         "last_seen": ts(T2 + 60_000)},
        {"file": "b.py", "reads": 1, "modifications": 0, "touches": 1,
         "last_seen": ts(T1 + 60_000)},
        {"file": "c.py", "reads": 0, "modifications": 1, "touches": 1,
         "last_seen": ts(T1 + 120_000)},
    ]  # fmt: skip
    assert stats.files(con, limit=1)["file"].to_list() == ["a.py"]


def test_top_concepts_are_case_insensitive(con: duckdb.DuckDBPyConnection) -> None:
    # o1 {cache, loader}; o2 {cache, lock, loader}; o3 {lock, cache} ("Cache" twice counts once)
    assert stats.concepts(con).to_dicts() == [
        {"concept": "cache", "observations": 3, "share_pct": 100.0, "last_seen": ts(T2 + 60_000)},
        {"concept": "loader", "observations": 2, "share_pct": 66.67, "last_seen": ts(T1 + 120_000)},
        {"concept": "lock", "observations": 2, "share_pct": 66.67, "last_seen": ts(T2 + 60_000)},
    ]  # fmt: skip


def test_concept_cooccurrence_counts_pairs_once_per_observation(
    con: duckdb.DuckDBPyConnection,
) -> None:
    # o1: (cache, loader); o2: (cache, loader), (cache, lock), (loader, lock); o3: (cache, lock)
    assert stats.cooccurrence(con).to_dicts() == [
        {"concept_a": "cache", "concept_b": "loader", "observations": 2},
        {"concept_a": "cache", "concept_b": "lock", "observations": 2},
        {"concept_a": "loader", "concept_b": "lock", "observations": 1},
    ]
    assert stats.cooccurrence(con, limit=1).height == 1
    assert stats.cooccurrence(con, Scope.parse(project="beta")).to_dicts() == [
        {"concept_a": "cache", "concept_b": "lock", "observations": 1}
    ]


# ----- sessions and ROI -----------------------------------------------------------------------
def test_session_timelines(con: duckdb.DuckDBPyConnection) -> None:
    assert stats.sessions(con).to_dicts() == [
        # s2: last activity is o3 at T2 + 60 s (no completion) → 60 s
        {"content_session_id": "s2", "project": "beta", "platform_source": "claude-code",
         "status": "active",
         "started_at": ts(T2), "last_activity_at": ts(T2 + 60_000), "prompts": 1,
         "observations": 1, "summaries": 0, "discovery_tokens": 0, "duration_s": 60.0},
        # s1: completed at T1 + 600 s, later than any prompt, observation or summary
        {"content_session_id": "s1", "project": "alpha", "platform_source": "claude-code",
         "status": "completed",
         "started_at": ts(T1), "last_activity_at": ts(T1 + 600_000), "prompts": 2,
         "observations": 2, "summaries": 1, "discovery_tokens": 127, "duration_s": 600.0},
    ]  # fmt: skip
    assert stats.sessions(con, limit=1)["content_session_id"].to_list() == ["s2"]


def test_memory_roi_from_the_ledger(con: duckdb.DuckDBPyConnection) -> None:
    assert roi.roi(con).to_dicts() == [
        # o1: shown in 3 blocks over 2 sessions; fetched in s1 after its injection there and
        # in s2 after its injection there → 2 of 3
        {"id": 1, "project": "alpha", "type": "feature", "title": "abcd", "discovery_tokens": 100,
         "read_tokens": 6, "injected": 3, "sessions_injected": 2, "fetched": 2,
         "fetched_after_injection": 2, "fetch_rate": 0.6667},
        # o2: fetched in s1 *before* it was injected there → not a use of the injection
        {"id": 2, "project": "alpha", "type": "bugfix", "title": "tttttttt",
         "discovery_tokens": 20, "read_tokens": 4, "injected": 1, "sessions_injected": 1,
         "fetched": 1, "fetched_after_injection": 0, "fetch_rate": 0.0},
        # o3: never injected, fetched once without a session
        {"id": 3, "project": "beta", "type": "feature", "title": "q", "discovery_tokens": 0,
         "read_tokens": 1, "injected": 0, "sessions_injected": 0, "fetched": 1,
         "fetched_after_injection": 0, "fetch_rate": None},
    ]  # fmt: skip
    assert roi.roi_summary(con) == {
        "injections": 3,
        "injected_tokens": 120,  # 50 + 30 + 40
        "items_shown": 4,
        "observations_injected": 2,
        "fetches": 4,
        "fetches_after_injection": 2,
    }


def test_roi_scope_selects_ledger_rows_by_time_and_observations_by_project(
    con: duckdb.DuckDBPyConnection,
) -> None:
    first_day = Scope.parse(date_end="2023-11-14")
    rows = roi.roi(con, first_day).select("id", "injected", "fetched", "fetched_after_injection")
    assert rows.to_dicts() == [
        {"id": 1, "injected": 2, "fetched": 1, "fetched_after_injection": 1},
        {"id": 2, "injected": 1, "fetched": 1, "fetched_after_injection": 0},
    ]
    assert roi.roi_summary(con, first_day)["injected_tokens"] == 80
    beta = roi.roi(con, Scope.parse(project="beta"))
    assert beta.select("id", "injected", "fetched").to_dicts() == [
        {"id": 3, "injected": 0, "fetched": 1}
    ]


# ----- reports (the CLI and HTTP shape) -------------------------------------------------------
def test_report_json_shape(con: duckdb.DuckDBPyConnection) -> None:
    economics = reports.report(con, "economics").to_json()
    assert economics == {"items": ECONOMICS_BY_PROJECT, "summary": ECONOMICS_SUMMARY}
    by_day = reports.report(con, "economics", by="day").to_json()
    assert [i["day"] for i in by_day["items"]] == ["2023-11-14", "2023-11-16"]
    files = reports.report(con, "files", limit=1).to_json()
    assert files == {
        "items": [
            {"file": "a.py", "reads": 2, "modifications": 2, "touches": 4,
             "last_seen": "2023-11-16T02:01:00.000Z"}
        ]
    }  # fmt: skip
    activity = reports.report(con, "activity", by="project").to_json()["summary"]
    assert activity == {
        "sessions": 2,
        "prompts": 3,
        "observations": 3,
        "summaries": 1,
        "discovery_tokens": 127,
        "projects": 2,
    }
    assert reports.report(con, "types").to_json()["summary"] == {"observations": 3, "types": 2}


@pytest.mark.parametrize(
    ("kind", "options", "words"),
    [
        ("nope", {}, "unknown statistic 'nope'; choose one of economics"),
        ("economics", {"by": "week"}, "by='week' does not apply to economics; use one of"),
        ("files", {"by": "day"}, "by='day' does not apply to files; drop it"),
        ("concepts", {"limit": 0}, "limit must be a positive integer"),
    ],
)
def test_report_refuses_bad_options(
    con: duckdb.DuckDBPyConnection, kind: str, options: dict[str, object], words: str
) -> None:
    with pytest.raises(InvalidInput, match=words):
        reports.report(con, kind, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", reports.REPORTS)
def test_every_report_works_on_an_empty_memory(empty: duckdb.DuckDBPyConnection, kind: str) -> None:
    result = reports.report(empty, kind).to_json()
    assert result["items"] == []
    if kind == "economics":
        assert result["summary"] == {
            "observations": 0,
            "read_tokens": 0,
            "discovery_tokens": 0,
            "saved_tokens": 0,
            "savings_pct": None,
        }


def test_the_cli_offers_every_report() -> None:
    assert tuple(s.value for s in Statistic) == reports.REPORTS
