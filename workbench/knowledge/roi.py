"""Memory ROI from the injection ledger: what a memory cost, how often it was shown, whether used.

The ledger (``workbench.recall.ledger``) records each injected block (``injections``), the
observations it showed (``injection_items``) and every observation handed out on request later
(``fetches``). A fetch counts as *after injection* when the same session had been shown that
observation at or before the fetch's millisecond: the agent saw it and then asked for it.

``Scope``'s time window selects ledger rows (when something was injected or fetched), its
``project`` and ``platform_source`` the observations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.knowledge.stats import ALL, ECONOMICS_COLUMNS, Estimator, Scope, with_read_tokens

if TYPE_CHECKING:
    import duckdb
    import polars as pl


def roi(
    con: duckdb.DuckDBPyConnection,
    scope: Scope = ALL,
    limit: int = 50,
    *,
    estimator: Estimator | None = None,
) -> pl.DataFrame:
    """Per observation shown or fetched in scope, most injected first.

    Columns: ``id, project, type, title, discovery_tokens, read_tokens, injected,
    sessions_injected, fetched, fetched_after_injection, fetch_rate`` (``fetch_rate`` =
    fetched after injection / injected; null when never injected).
    """
    import polars as pl

    shown, fetched = _ledger(con, scope)
    injected = shown.group_by("observation_id").agg(
        injected=pl.len().cast(pl.Int64),
        sessions_injected=pl.col("content_session_id").drop_nulls().n_unique().cast(pl.Int64),
    )
    after = (
        _fetched_after_injection(shown, fetched)
        .group_by("observation_id")
        .agg(fetched_after_injection=pl.len().cast(pl.Int64))
    )
    fetch_counts = fetched.group_by("observation_id").agg(fetched=pl.len().cast(pl.Int64))
    ids = pl.concat([injected.select("observation_id"), fetch_counts.select("observation_id")])
    where, params = Scope(project=scope.project, platform_source=scope.platform_source).where()
    where = (where + " AND" if where else " WHERE") + " id IN (SELECT unnest(?::BIGINT[]))"
    obs = con.execute(
        f"SELECT {ECONOMICS_COLUMNS} FROM observations{where}",
        [*params, ids.unique()["observation_id"].to_list()],
    ).pl()
    counts = ("injected", "sessions_injected", "fetched", "fetched_after_injection")
    out = (
        with_read_tokens(obs, estimator)
        .select("id", "project", "type", "title", "discovery_tokens", "read_tokens")
        .join(injected.rename({"observation_id": "id"}), on="id", how="left")
        .join(fetch_counts.rename({"observation_id": "id"}), on="id", how="left")
        .join(after.rename({"observation_id": "id"}), on="id", how="left")
        .with_columns(pl.col(*counts).fill_null(0))
        .with_columns(
            fetch_rate=pl.when(pl.col("injected") > 0).then(
                (pl.col("fetched_after_injection") / pl.col("injected")).round(4)
            )
        )
    )
    return out.sort(
        ["injected", "fetched_after_injection", "id"], descending=[True, True, False]
    ).head(limit)


def roi_summary(con: duckdb.DuckDBPyConnection, scope: Scope = ALL) -> dict[str, Any]:
    """Ledger totals in scope: blocks injected, their tokens, items shown, fetches, reuse."""
    shown, fetched = _ledger(con, scope)
    blocks = shown.unique("injection_id")
    return {
        "injections": blocks.height,
        "injected_tokens": int(blocks["tokens"].sum()) if blocks.height else 0,
        "items_shown": shown.height,
        "observations_injected": shown["observation_id"].n_unique() if shown.height else 0,
        "fetches": fetched.height,
        "fetches_after_injection": _fetched_after_injection(shown, fetched).height,
    }


def _fetched_after_injection(shown: pl.DataFrame, fetched: pl.DataFrame) -> pl.DataFrame:
    """The fetches made in a session that had already been shown that observation."""
    import polars as pl

    first_shown = (
        shown.filter(pl.col("content_session_id").is_not_null())
        .group_by("observation_id", "content_session_id")
        .agg(first_ms=pl.col("created_at_epoch").min())
    )
    return fetched.join(first_shown, on=["observation_id", "content_session_id"]).filter(
        pl.col("created_at_epoch") >= pl.col("first_ms")
    )


def _ledger(con: duckdb.DuckDBPyConnection, scope: Scope) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(items shown, fetches) in scope, with session and time; project and platform via the
    observation."""
    of_obs, extra = Scope(project=scope.project, platform_source=scope.platform_source).where()
    project = f" AND observation_id IN (SELECT id FROM observations{of_obs})" if extra else ""
    window = Scope(start_ms=scope.start_ms, end_ms=scope.end_ms)
    where, params = window.where("j.created_at_epoch", None)
    shown = con.execute(
        "SELECT i.injection_id, i.observation_id, j.content_session_id, j.created_at_epoch,"
        " j.tokens FROM injection_items i JOIN injections j ON j.id = i.injection_id"
        f"{where or ' WHERE true'}{project}",
        [*params, *extra],
    ).pl()
    where, params = window.where("created_at_epoch", None)
    fetched = con.execute(
        "SELECT observation_id, content_session_id, created_at_epoch FROM fetches"
        f"{where or ' WHERE true'}{project}",
        [*params, *extra],
    ).pl()
    return shown, fetched
