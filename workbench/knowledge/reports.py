"""One report per statistic name: what ``workbench stats`` and ``/api/stats/*`` both serve.

A report is a statistic's frame plus, where totals make sense, a summary; ``to_json()`` is
the one wire shape (``{"items": [...], "summary": {...}}``), so the CLI's ``--json`` and the
HTTP API cannot drift apart. Options are validated here, with messages that say what fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from workbench.errors import InvalidInput
from workbench.knowledge import roi as ledger_stats
from workbench.knowledge import stats
from workbench.knowledge.stats import ALL, Estimator, Scope

if TYPE_CHECKING:
    import duckdb
    import polars as pl

REPORTS = ("economics", "types", "activity", "files", "concepts", "cooccurrence", "sessions", "roi")
BY: dict[str, tuple[str, ...]] = {
    "economics": stats.ECONOMICS_BY,
    "activity": stats.ACTIVITY_BY,
}
# Over rows that name their author (the team views: workbench/team/combined.py) these also
# take ``author``.
AUTHORED_BY: dict[str, tuple[str, ...]] = {
    "economics": (*stats.ECONOMICS_BY, stats.AUTHOR),
    "types": (stats.AUTHOR,),
    "activity": (*stats.ACTIVITY_BY, stats.AUTHOR),
}
LIMITED = ("files", "concepts", "cooccurrence", "sessions", "roi")
_TOP_N = {"files": stats.files, "concepts": stats.concepts, "cooccurrence": stats.cooccurrence}


@dataclass(frozen=True)
class Report:
    """A statistic's rows and, where one makes sense, its totals."""

    kind: str
    frame: pl.DataFrame
    summary: dict[str, Any] | None = None

    def records(self) -> list[dict[str, Any]]:
        """Rows as JSON-ready dicts: dates ``YYYY-MM-DD``, times ISO-8601 UTC with ``Z``."""
        return [{k: _jsonable(v) for k, v in row.items()} for row in self.frame.to_dicts()]

    def to_json(self) -> dict[str, Any]:
        """``{"items": [...], "summary": {...}}`` (no summary key when there is none)."""
        out: dict[str, Any] = {"items": self.records()}
        if self.summary is not None:
            out["summary"] = self.summary
        return out


def report(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    scope: Scope = ALL,
    *,
    by: str | None = None,
    limit: int | None = None,
    estimator: Estimator | None = None,
) -> Report:
    """Run the statistic ``kind`` (one of ``REPORTS``) with its summary.

    ``by="author"`` applies when ``con``'s rows name their author (the team views), which
    ``groupings`` asks ``con`` itself: the caller picked its source, the report follows it.
    """
    if kind not in REPORTS:
        raise InvalidInput(f"unknown statistic {kind!r}; choose one of {', '.join(REPORTS)}")
    allowed = groupings(con, kind) if by is not None else ()
    if by is not None and by not in allowed:
        if by == stats.AUTHOR and kind in AUTHORED_BY:
            raise InvalidInput(
                f"by=author splits {kind} by who wrote each memory; it needs the team "
                "(workbench stats --team, after workbench team init)"
            )
        raise InvalidInput(
            f"by={by!r} does not apply to {kind}; "
            + (f"use one of {', '.join(allowed)}" if allowed else "drop it")
        )
    if limit is not None and limit < 1:
        raise InvalidInput(f"limit must be a positive integer, got {limit}")
    sized = {"limit": limit} if limit is not None and kind in LIMITED else {}
    if kind == "economics":
        rows = stats.economics(con, scope, by or "project", estimator=estimator)  # type: ignore[arg-type]
        return Report(kind, rows, stats.economics_summary(rows))
    if kind == "types":
        rows = stats.types(con, scope, by)
        total = int(rows["observations"].sum()) if rows.height else 0
        kinds = rows["type"].n_unique() if rows.height else 0
        summary = {"observations": total, "types": kinds}
        if by == stats.AUTHOR:
            summary["authors"] = rows[stats.AUTHOR].n_unique() if rows.height else 0
        return Report(kind, rows, summary)
    if kind == "activity":
        group = by or "day"
        rows = stats.activity(con, scope, group)  # type: ignore[arg-type]
        counts = ("sessions", "prompts", "observations", "summaries", "discovery_tokens")
        totals = {c: int(rows[c].sum()) if rows.height else 0 for c in counts}
        return Report(kind, rows, {**totals, f"{group}s": rows.height})
    if kind == "roi":
        rows = ledger_stats.roi(con, scope, estimator=estimator, **sized)
        return Report(kind, rows, ledger_stats.roi_summary(con, scope))
    if kind in _TOP_N:
        return Report(kind, _TOP_N[kind](con, scope, **sized))
    return Report(kind, stats.sessions(con, scope, **sized))


def groupings(con: duckdb.DuckDBPyConnection, kind: str) -> tuple[str, ...]:
    """What ``kind`` may be split ``by`` over ``con``'s rows (``author`` when they name one)."""
    return (AUTHORED_BY if stats.names_authors(con) else BY).get(kind, ())


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds") + ("Z" if value.tzinfo is None else "")
    if isinstance(value, date):
        return value.isoformat()
    return value
