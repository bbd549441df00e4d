"""Memory statistics as polars DataFrames: one function per question, shared by every surface.

The CLI (``workbench stats``), the HTTP API (``/api/stats/*``) and the notebooks call these
same functions, so a figure means the same thing everywhere. DuckDB (``duck``) selects and
filters the rows, reading only the columns a statistic needs; polars does the arithmetic.

Definitions (each one tested against hand-computed numbers):

- **read tokens** of an observation: what it costs to read it back, the token estimate of its
  title + subtitle + narrative + facts: ``ceil(chars / 4)`` over the sum of their characters
  (``workbench.tokens``), unless the caller passes another ``estimator``.
- **discovery tokens**: what producing it cost (stored by the compressor).
- **savings %**: ``100 * (1 - read / discovery)``; null when nothing was spent on discovery.
- **concepts** are compared lowercased and trimmed (``Cache`` and ``cache`` are one concept);
  co-occurrence counts each unordered pair once per observation (``concept_a < concept_b``).
- **days** are UTC calendar days.
- ``Scope`` bounds the time of the thing being counted: an observation's creation, a
  session's start, an injection's or fetch's time (ROI). ``project`` is an exact name;
  ``platform_source`` one agent platform (every view carries it: prompts and summaries take
  their session's, see ``duck.VIEWS``).

Memory ROI (the injection ledger) is in ``roi``; ``reports`` names each statistic and gives
the JSON the CLI and the HTTP API serve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from workbench.errors import InvalidInput

if TYPE_CHECKING:
    import duckdb
    import polars as pl

Estimator = Callable[[str], int]
EconomicsBy = Literal["project", "type", "day", "platform_source", "author"]
ActivityBy = Literal["day", "project", "platform_source", "author"]
ACTIVITY_BY = ("day", "project", "platform_source")
ECONOMICS_BY = ("project", "type", "day", "platform_source")
# Only the team views (workbench/team/combined.py) have an ``author`` column ("me" for this
# store's rows, the author id for the lake's): ``by="author"`` is for them.
AUTHOR = "author"
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Scope:
    """Which rows a statistic covers: one project, one agent platform and/or a time window
    (epoch ms, inclusive)."""

    project: str | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    platform_source: str | None = None

    @classmethod
    def parse(
        cls,
        project: str | None = None,
        date_start: Any = None,
        date_end: Any = None,
        platform_source: Any = None,
        names: tuple[str, str] = ("dateStart", "dateEnd"),
    ) -> Scope:
        """From wire values: ISO dates/timestamps or epoch ms; a plain end date is inclusive;
        a platform must be a known one (``UnknownPlatform`` otherwise). ``names`` are the
        spellings the caller received the dates under, so an error names what was sent."""
        from workbench.platform_filter import check_platform
        from workbench.recall.filters import parse_time

        platform = check_platform(platform_source)
        first, last = names
        start = parse_time(date_start, first)
        end = parse_time(date_end, last, end_of_day=True)
        if start is not None and end is not None and start > end:
            raise InvalidInput(
                f"{first} is after {last}; give the earlier date first, e.g. "
                f"{first}=2026-11-01&{last}=2026-11-30"
            )
        return cls(project=project or None, start_ms=start, end_ms=end, platform_source=platform)

    def where(
        self,
        epoch: str = "created_at_epoch",
        project: str | None = "project",
        platform: str | None = "platform_source",
    ) -> tuple[str, list[Any]]:
        """A SQL ``WHERE`` clause (or ``""``) and its parameters, compiled by the one DuckDB
        compiler of filters (``recall.filters_duckdb``); ``None`` leaves that column out."""
        from workbench.recall import filters_duckdb
        from workbench.recall.filters import SearchFilters

        # Built from values ``parse`` (or a caller holding them) already checked.
        filters = SearchFilters.model_construct(
            project=self.project if project else None,
            platform_source=self.platform_source if platform else None,
            date_start=self.start_ms,
            date_end=self.end_ms,
        )
        columns = filters_duckdb.Columns(
            epoch=epoch, project=project, platform=platform, type=None, concepts=None, files=()
        )
        clauses, params = filters_duckdb.where(filters, columns)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


ALL = Scope()


def frame(
    con: duckdb.DuckDBPyConnection,
    view: str,
    columns: str,
    scope: Scope = ALL,
    *,
    epoch: str = "created_at_epoch",
) -> pl.DataFrame:
    """``SELECT columns FROM view`` within ``scope``, as polars (our SQL, never a user's)."""
    where, params = scope.where(epoch)
    return con.execute(f"SELECT {columns} FROM {view}{where}", params).pl()


def names_authors(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con``'s observations say who wrote each (the team views do, with ``author``;
    one person's store does not): a report may then be split by author."""
    described = con.execute("SELECT * FROM observations LIMIT 0").description or []
    return AUTHOR in (d[0] for d in described)


# ----- token economics -------------------------------------------------------------------------
def with_read_tokens(obs: pl.DataFrame, estimator: Estimator | None = None) -> pl.DataFrame:
    """Add ``read_tokens`` (needs title, subtitle, narrative, facts)."""
    import polars as pl

    if estimator is None:
        chars = (
            pl.col("title").str.len_chars()
            + pl.col("subtitle").str.len_chars()
            + pl.col("narrative").str.len_chars()
            + pl.col("facts").list.eval(pl.element().str.len_chars()).list.sum().fill_null(0)
        )
        tokens = (chars / CHARS_PER_TOKEN).ceil().cast(pl.Int64)
    else:
        text = pl.concat_str(
            [
                pl.col("title"),
                pl.col("subtitle"),
                pl.col("narrative"),
                pl.col("facts").list.join("\n"),
            ],
            separator="\n",
        )
        tokens = text.map_elements(estimator, return_dtype=pl.Int64)
    return obs.with_columns(read_tokens=tokens)


ECONOMICS_COLUMNS = (
    "id, project, platform_source, type, day, title, subtitle, narrative, facts, discovery_tokens"
)


def _savings(frame_: pl.DataFrame) -> pl.DataFrame:
    import polars as pl

    read, spent = pl.col("read_tokens"), pl.col("discovery_tokens")
    return frame_.with_columns(
        saved_tokens=spent - read,
        savings_pct=pl.when(spent > 0).then(((1 - read / spent) * 100).round(2)),
    )


def economics(
    con: duckdb.DuckDBPyConnection,
    scope: Scope = ALL,
    by: EconomicsBy = "project",
    *,
    estimator: Estimator | None = None,
) -> pl.DataFrame:
    """Read tokens vs discovery tokens per project, type, day or agent platform.

    Columns: ``<by>, observations, read_tokens, discovery_tokens, saved_tokens, savings_pct``.
    ``by="author"`` needs the team views.
    """
    import polars as pl

    if by not in (*ECONOMICS_BY, AUTHOR):
        raise InvalidInput(f"by={by!r} is not one of {', '.join(ECONOMICS_BY)}, author")
    columns = ECONOMICS_COLUMNS + (", author" if by == AUTHOR else "")
    obs = with_read_tokens(frame(con, "observations", columns, scope), estimator)
    grouped = obs.group_by(by).agg(
        observations=pl.len().cast(pl.Int64),
        read_tokens=pl.col("read_tokens").sum(),
        discovery_tokens=pl.col("discovery_tokens").sum(),
    )
    order = [by] if by == "day" else ["discovery_tokens", by]
    descending = [False] if by == "day" else [True, False]
    return _savings(grouped).sort(order, descending=descending)


def economics_summary(per_group: pl.DataFrame) -> dict[str, Any]:
    """Totals over an ``economics`` frame (any ``by``)."""
    read = int(per_group["read_tokens"].sum()) if per_group.height else 0
    spent = int(per_group["discovery_tokens"].sum()) if per_group.height else 0
    return {
        "observations": int(per_group["observations"].sum()) if per_group.height else 0,
        "read_tokens": read,
        "discovery_tokens": spent,
        "saved_tokens": spent - read,
        "savings_pct": round((1 - read / spent) * 100, 2) if spent else None,
    }


# ----- types and activity ----------------------------------------------------------------------
def types(
    con: duckdb.DuckDBPyConnection, scope: Scope = ALL, by: str | None = None
) -> pl.DataFrame:
    """Observations per type: ``type, observations, share_pct, discovery_tokens, projects``.

    ``by="author"`` (team views): per author and type, ``share_pct`` within each author.
    """
    import polars as pl

    if by not in (None, AUTHOR):
        raise InvalidInput(f"by={by!r} does not apply to types; use author (with the team)")
    keys = [AUTHOR, "type"] if by == AUTHOR else ["type"]
    obs = frame(con, "observations", ", ".join([*keys, "project", "discovery_tokens"]), scope)
    total = pl.col("observations").sum().over(AUTHOR) if by == AUTHOR else obs.height
    order = [*keys[:-1], "observations", "type"]
    return (
        obs.group_by(keys)
        .agg(
            observations=pl.len().cast(pl.Int64),
            discovery_tokens=pl.col("discovery_tokens").sum(),
            projects=pl.col("project").n_unique().cast(pl.Int64),
        )
        .with_columns(share_pct=(pl.col("observations") / total * 100).round(2))
        .select(*keys, "observations", "share_pct", "discovery_tokens", "projects")
        .sort(order, descending=[False] * (len(keys) - 1) + [True, False])
    )


def activity(
    con: duckdb.DuckDBPyConnection, scope: Scope = ALL, by: ActivityBy = "day"
) -> pl.DataFrame:
    """What happened per day, project or agent platform.

    Columns: ``<by>, sessions, prompts, observations, summaries, discovery_tokens`` (sessions
    counted on the day they started; discovery tokens of observations and summaries).
    """
    import polars as pl

    if by not in (*ACTIVITY_BY, AUTHOR):
        raise InvalidInput(f"by={by!r} is not one of {', '.join(ACTIVITY_BY)}, author")
    parts = {
        "sessions": frame(con, "sessions", f"{by}, 0 AS tokens", scope, epoch="started_at_epoch"),
        "prompts": frame(con, "prompts", f"{by}, 0 AS tokens", scope),
        "observations": frame(con, "observations", f"{by}, discovery_tokens AS tokens", scope),
        "summaries": frame(con, "summaries", f"{by}, discovery_tokens AS tokens", scope),
    }
    counted = [
        part.group_by(by).agg(pl.len().cast(pl.Int64).alias(name), pl.col("tokens").sum())
        for name, part in parts.items()
    ]
    keys = pl.concat([c.select(by) for c in counted]).unique()
    out = keys
    for name, part in zip(parts, counted, strict=True):
        out = out.join(part.rename({"tokens": f"_{name}_tokens"}), on=by, how="left")
    out = out.with_columns(
        [pl.col(name).fill_null(0) for name in parts],
        discovery_tokens=pl.sum_horizontal(
            pl.col("_observations_tokens").fill_null(0), pl.col("_summaries_tokens").fill_null(0)
        ).cast(pl.Int64),
    )
    return out.select(by, *parts, "discovery_tokens").sort(by)


# ----- files and concepts ----------------------------------------------------------------------
def files(con: duckdb.DuckDBPyConnection, scope: Scope = ALL, limit: int = 20) -> pl.DataFrame:
    """The most touched files: ``file, reads, modifications, touches, last_seen``.

    ``reads``/``modifications`` count observations listing the file in ``files_read`` /
    ``files_modified`` (once per observation); ``touches`` is their sum.
    """
    import polars as pl

    obs = frame(con, "observations", "id, files_read, files_modified, created_ts", scope)
    long = pl.concat(
        [
            obs.select("id", "created_ts", file=pl.col(col).list.unique())
            .explode("file")
            .with_columns(kind=pl.lit(kind))
            for col, kind in (("files_read", "reads"), ("files_modified", "modifications"))
        ]
    ).filter(pl.col("file").is_not_null() & (pl.col("file") != ""))
    return (
        long.group_by("file")
        .agg(
            reads=(pl.col("kind") == "reads").sum().cast(pl.Int64),
            modifications=(pl.col("kind") == "modifications").sum().cast(pl.Int64),
            last_seen=pl.col("created_ts").max(),
        )
        .with_columns(touches=pl.col("reads") + pl.col("modifications"))
        .select("file", "reads", "modifications", "touches", "last_seen")
        .sort(["touches", "file"], descending=[True, False])
        .head(limit)
    )


def _concepts_long(con: duckdb.DuckDBPyConnection, scope: Scope) -> tuple[pl.DataFrame, int]:
    """One row per (observation, distinct normalised concept); and the observations in scope."""
    import polars as pl

    obs = frame(con, "observations", "id, concepts, created_ts", scope)
    long = (
        obs.explode("concepts")
        .with_columns(concept=pl.col("concepts").str.strip_chars().str.to_lowercase())
        .filter(pl.col("concept").is_not_null() & (pl.col("concept") != ""))
        .unique(["id", "concept"])
        .select("id", "concept", "created_ts")
    )
    return long, obs.height


def concepts(con: duckdb.DuckDBPyConnection, scope: Scope = ALL, limit: int = 20) -> pl.DataFrame:
    """The most frequent concepts: ``concept, observations, share_pct, last_seen``."""
    import polars as pl

    long, total = _concepts_long(con, scope)
    return (
        long.group_by("concept")
        .agg(observations=pl.len().cast(pl.Int64), last_seen=pl.col("created_ts").max())
        .with_columns(share_pct=(pl.col("observations") / max(total, 1) * 100).round(2))
        .select("concept", "observations", "share_pct", "last_seen")
        .sort(["observations", "concept"], descending=[True, False])
        .head(limit)
    )


def cooccurrence(
    con: duckdb.DuckDBPyConnection, scope: Scope = ALL, limit: int = 20
) -> pl.DataFrame:
    """Concept pairs seen in the same observation: ``concept_a, concept_b, observations``."""
    import polars as pl

    long, _ = _concepts_long(con, scope)
    pairs = (
        long.select("id", concept_a="concept")
        .join(long.select("id", concept_b="concept"), on="id")
        .filter(pl.col("concept_a") < pl.col("concept_b"))
    )
    return (
        pairs.group_by("concept_a", "concept_b")
        .agg(observations=pl.len().cast(pl.Int64))
        .sort(["observations", "concept_a", "concept_b"], descending=[True, False, False])
        .head(limit)
    )


# ----- session timelines -----------------------------------------------------------------------
def sessions(con: duckdb.DuckDBPyConnection, scope: Scope = ALL, limit: int = 50) -> pl.DataFrame:
    """One row per session, newest first.

    Columns: ``content_session_id, project, platform_source, status, started_at,
    last_activity_at, prompts,
    observations, summaries, discovery_tokens, duration_s`` — the duration runs from the start
    to the latest of completion, last prompt, last observation and last summary.
    """
    import polars as pl

    base = frame(
        con,
        "sessions",
        "content_session_id, project, platform_source, status, started_at_epoch,"
        " completed_at_epoch",
        scope,
        epoch="started_at_epoch",
    ).sort(["started_at_epoch", "content_session_id"], descending=[True, False])
    base = base.head(limit)
    ids = base["content_session_id"].to_list()
    per: dict[str, pl.DataFrame] = {}
    for name, view in (
        ("prompts", "prompts"),
        ("observations", "observations"),
        ("summaries", "summaries"),
    ):
        tokens = "0" if view == "prompts" else "discovery_tokens"
        rows = con.execute(
            f"SELECT content_session_id, created_at_epoch, {tokens} AS tokens FROM {view}"
            " WHERE content_session_id IN (SELECT unnest(?::VARCHAR[]))",
            [ids],
        ).pl()
        per[name] = rows.group_by("content_session_id").agg(
            pl.len().cast(pl.Int64).alias(name),
            pl.col("created_at_epoch").max().alias(f"_{name}_last"),
            pl.col("tokens").sum().alias(f"_{name}_tokens"),
        )
    out = base
    for part in per.values():
        out = out.join(part, on="content_session_id", how="left")
    last = pl.max_horizontal(
        "started_at_epoch",
        "completed_at_epoch",
        *(f"_{name}_last" for name in per),
    )
    out = out.with_columns(
        [pl.col(name).fill_null(0) for name in per],
        discovery_tokens=pl.sum_horizontal(
            pl.col("_observations_tokens").fill_null(0), pl.col("_summaries_tokens").fill_null(0)
        ).cast(pl.Int64),
        _last=last,
    )
    return out.select(
        "content_session_id",
        "project",
        "platform_source",
        "status",
        pl.from_epoch("started_at_epoch", time_unit="ms").alias("started_at"),
        pl.from_epoch("_last", time_unit="ms").alias("last_activity_at"),
        *per,
        "discovery_tokens",
        ((pl.col("_last") - pl.col("started_at_epoch")) / 1000).alias("duration_s"),
    )
