import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="workbench · analytics")

with app.setup:
    import argparse
    from datetime import date
    from typing import Any

    import altair as alt
    import marimo as mo
    import polars as pl

    from workbench import notebooks
    from workbench.errors import WorkbenchError
    from workbench.knowledge import roi, stats
    from workbench.store import duck

    WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    DEFAULT_SQL = (
        "SELECT project, type, count(*) AS observations,\n"
        "       sum(discovery_tokens) AS discovery_tokens\n"
        "FROM observations\nGROUP BY ALL\nORDER BY observations DESC"
    )


@app.function
def day_arg(text: str | None, first: date, last: date, default: date) -> date:
    """An ISO date argument, kept inside the memory's span (the widget refuses others)."""
    if not text:
        return default
    return min(max(date.fromisoformat(text), first), last)


@app.function
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """``--data-dir`` and the starting scope (``--project``, ``--since``, ``--until``)."""
    parser = notebooks.base_parser("Analytics over the workbench memory (read-only).")
    parser.add_argument("--project")
    parser.add_argument("--since", help="ISO date")
    parser.add_argument("--until", help="ISO date")
    return notebooks.parse_known(parser, argv)


@app.function
def scope_for(project: str, days: tuple[date, date] | None) -> stats.Scope:
    """The statistics' scope from the widgets (``(all)`` means every project)."""
    start, end = days if days else (None, None)
    return stats.Scope.parse(
        None if project == "(all)" else project,
        start.isoformat() if start else None,
        end.isoformat() if end else None,
    )


@app.function
def heatmap(con: Any, scope: stats.Scope) -> pl.DataFrame:
    """Observations per weekday and UTC hour: when the work happens."""
    frame = stats.frame(con, "observations", "created_ts", scope)
    return (
        frame.with_columns(
            weekday=pl.col("created_ts").dt.weekday(), hour=pl.col("created_ts").dt.hour()
        )
        .group_by("weekday", "hour")
        .len(name="observations")
        .with_columns(day=pl.col("weekday").map_elements(lambda d: WEEKDAYS[d - 1], pl.Utf8))
    )


@app.function
def type_mix(con: Any, scope: stats.Scope) -> pl.DataFrame:
    """Observations per ISO week and type, with each type's share of that week."""
    frame = stats.frame(con, "observations", "type, day", scope)
    weekly = frame.with_columns(week=pl.col("day").dt.truncate("1w")).group_by("week", "type").len()
    return weekly.with_columns(share=pl.col("len") / pl.col("len").sum().over("week")).sort("week")


@app.function
def session_events(con: Any, session_id: str) -> pl.DataFrame:
    """A session's prompts, observations and summaries in time order (the explorer's rows)."""
    sql = """
        SELECT created_ts AS event_at, 'prompt' AS kind, prompt_number, 'prompt' AS type,
               prompt_text AS title
          FROM prompts WHERE content_session_id = ?
        UNION ALL
        SELECT created_ts, 'observation', prompt_number, type, title
          FROM observations WHERE content_session_id = ?
        UNION ALL
        SELECT created_ts, 'summary', prompt_number, 'summary', coalesce(completed, learned)
          FROM summaries WHERE content_session_id = ?
        ORDER BY event_at, kind
    """
    return con.execute(sql, [session_id] * 3).pl()


@app.function
def headless_summary(defs: Any) -> list[str]:
    """What a headless run (``python notebooks/analytics.py``) computed, in a few lines."""
    totals = defs.get("economics_totals")
    if totals is None:
        return []
    args = defs["args"]
    scope = [f"{k} {v}" for k, v in vars(args).items() if k != "data_dir" and v]
    lines = [
        f"analytics of {defs['settings'].db_path}" + (f" ({', '.join(scope)})" if scope else ""),
        f"observations: {totals['observations']}; discovery tokens {totals['discovery_tokens']:,}; "
        f"read tokens {totals['read_tokens']:,}; saved per full read {totals['saved_tokens']:,}"
        + (f" ({totals['savings_pct']}%)" if totals.get("savings_pct") is not None else ""),
    ]
    activity = defs.get("activity_by_day")
    if activity is not None and not activity.is_empty():
        lines.append(
            f"activity: {activity.height} days, {int(activity['sessions'].sum())} sessions, "
            f"{int(activity['prompts'].sum())} prompts"
        )
    sql = defs.get("sql_result")
    if sql is not None:
        lines.append(f"sql cell: {sql.height} rows")
    return lines


@app.cell(hide_code=True)
def _():
    mo.md(r"""
    # Memory analytics

    What the memory holds and what it is worth: the **token economics** (what reading a memory
    costs against what discovering it cost), when the work happens, how the mix of work
    changes, the files and concepts that keep coming back, each session's timeline, and a
    SQL cell over the read-only DuckDB views (`observations`, `sessions`, `prompts`,
    `summaries`, `injections`, `fetches`).
    """)
    return


@app.cell
def _():
    args = parse_args()
    return (args,)


@app.cell
def _(args):
    settings = notebooks.settings_for(args.data_dir)
    try:
        with notebooks.open_store(settings) as _store:
            catalogue = notebooks.catalogue(_store.conn)
        con = duck.connect(settings.db_path)
        problem = None
    except WorkbenchError as exc:
        con, catalogue, problem = None, None, exc.message
    mo.stop(con is None, mo.callout(mo.md(f"**No memory to read.** {problem}"), kind="danger"))
    return catalogue, con


@app.cell
def _(args, catalogue):
    _first, _last = catalogue.first_day or date.today(), catalogue.last_day or date.today()
    project = mo.ui.dropdown(
        ["(all)", *catalogue.projects],
        value=args.project if args.project in catalogue.projects else "(all)",
        label="project",
    )
    days = mo.ui.date_range(
        start=_first,
        stop=_last,
        value=(
            day_arg(args.since, _first, _last, _first),
            day_arg(args.until, _first, _last, _last),
        ),
        label="dates",
    )
    mo.hstack([project, days], justify="start")
    return days, project


@app.cell
def _(days, project):
    scope = scope_for(project.value, days.value)
    return (scope,)


@app.cell(hide_code=True)
def _():
    mo.md(r"""
    ## Token economics

    *Discovery tokens* are what the agent spent reading tool output to learn something; *read
    tokens* are what re-reading the observation costs (`ceil(chars / 4)`). The difference is
    what the memory saves each time it is injected instead of rediscovered.
    """)
    return


@app.cell
def _(con, scope):
    economics_by_project = stats.economics(con, scope, "project")
    economics_by_day = stats.economics(con, scope, "day")
    economics_totals = stats.economics_summary(economics_by_project)
    _t = economics_totals
    mo.hstack(
        [
            mo.stat(_t["observations"], label="observations"),
            mo.stat(f"{_t['discovery_tokens']:,}", label="discovery tokens"),
            mo.stat(f"{_t['read_tokens']:,}", label="read tokens"),
            mo.stat(f"{_t['saved_tokens']:,}", label="saved per full read"),
            mo.stat(
                f"{_t['savings_pct']}%" if _t["savings_pct"] is not None else "—", label="savings"
            ),
        ],
        justify="start",
    )
    return economics_by_day, economics_by_project, economics_totals


@app.cell
def _(economics_by_day, economics_by_project):
    _long = economics_by_project.unpivot(
        index="project", on=["read_tokens", "discovery_tokens"], variable_name="kind"
    )
    _per_project = (
        alt.Chart(_long)
        .mark_bar()
        .encode(
            y=alt.Y("project:N", sort="-x"),
            x=alt.X("value:Q", title="tokens"),
            color="kind:N",
            yOffset="kind:N",
            tooltip=["project", "kind", "value"],
        )
        .properties(title="per project", height=220, width=330)
    )
    _cumulative = economics_by_day.sort("day").with_columns(
        discovery=pl.col("discovery_tokens").cum_sum(), read=pl.col("read_tokens").cum_sum()
    )
    _over_time = (
        alt.Chart(_cumulative.unpivot(index="day", on=["discovery", "read"], variable_name="kind"))
        .mark_line(point=True)
        .encode(x="day:T", y=alt.Y("value:Q", title="cumulative tokens"), color="kind:N")
        .properties(title="over time", height=220, width=380)
    )
    mo.hstack([mo.ui.altair_chart(_per_project), mo.ui.altair_chart(_over_time)], justify="start")
    return


@app.cell
def _(con, scope):
    activity_by_day = stats.activity(con, scope, "day")
    _hours = heatmap(con, scope)
    _heat = (
        alt.Chart(_hours)
        .mark_rect()
        .encode(
            x=alt.X("hour:O", title="hour (UTC)"),
            y=alt.Y("day:N", sort=WEEKDAYS, title=None),
            color=alt.Color("observations:Q", scale=alt.Scale(scheme="greens")),
            tooltip=["day", "hour", "observations"],
        )
        .properties(title="when the work happens", height=180, width=420)
    )
    _timeline = (
        alt.Chart(activity_by_day.unpivot(index="day", on=["sessions", "prompts", "observations"]))
        .mark_bar()
        .encode(x="day:T", y=alt.Y("value:Q", title="count"), color="variable:N")
        .properties(title="activity per day", height=180, width=420)
    )
    mo.vstack([mo.md("## Activity"), mo.hstack([_heat, _timeline], justify="start")])
    return (activity_by_day,)


@app.cell
def _(con, scope):
    _mix = type_mix(con, scope)
    _chart = (
        alt.Chart(_mix)
        .mark_bar()
        .encode(
            x=alt.X("yearmonthdate(week):O", title="week of"),
            y=alt.Y("share:Q", stack="normalize", axis=alt.Axis(format="%")),
            color="type:N",
            tooltip=["week", "type", "len", alt.Tooltip("share:Q", format=".0%")],
        )
        .properties(title="type mix per week", height=220, width=620)
    )
    mo.vstack([mo.md("## Type mix over time"), mo.ui.altair_chart(_chart)])
    return


@app.cell
def _(con, scope):
    top_files = stats.files(con, scope, limit=12)
    top_concepts = stats.concepts(con, scope, limit=12)
    _pairs = stats.cooccurrence(con, scope, limit=10)
    _files = (
        alt.Chart(top_files)
        .mark_bar()
        .encode(
            y=alt.Y("file:N", sort="-x", title=None),
            x="touches:Q",
            color=alt.value("#4c78a8"),
            tooltip=["file", "reads", "modifications"],
        )
        .properties(title="most touched files", height=260, width=300)
    )
    _concepts = (
        alt.Chart(top_concepts)
        .mark_bar()
        .encode(y=alt.Y("concept:N", sort="-x", title=None), x="observations:Q")
        .properties(title="top concepts", height=260, width=220)
    )
    mo.vstack(
        [
            mo.md("## Files and concepts"),
            mo.hstack([_files, _concepts], justify="start"),
            mo.md("Concepts that appear together:"),
            mo.ui.table(_pairs, selection=None, page_size=10),
        ]
    )
    return top_concepts, top_files


@app.cell
def _(con, scope):
    session_table = stats.sessions(con, scope, limit=100)
    session_picker = mo.ui.table(
        session_table, selection="single", page_size=8, label="pick a session"
    )
    mo.vstack([mo.md("## Sessions"), session_picker])
    return session_picker, session_table


@app.cell
def _(con, session_picker, session_table):
    mo.stop(session_table.is_empty())
    _picked = session_picker.value
    _row = _picked.row(0, named=True) if len(_picked) else session_table.row(0, named=True)
    timeline_rows = session_events(con, _row["content_session_id"])
    _chart = (
        alt.Chart(timeline_rows)
        .mark_point(filled=True, size=90)
        .encode(
            x=alt.X("event_at:T", title=None),
            y=alt.Y("kind:N", title=None),
            color="type:N",
            tooltip=["event_at", "prompt_number", "type", "title"],
        )
        .properties(height=140, width=640)
    )
    mo.vstack(
        [
            mo.md(
                f"**{_row['project']}** · session `{_row['content_session_id'][:8]}` · "
                f"{_row['prompts']} prompts, {_row['observations']} observations, "
                f"{_row['duration_s'] / 60:.0f} min"
            ),
            mo.ui.altair_chart(_chart),
            mo.ui.table(timeline_rows, selection=None, page_size=10),
        ]
    )
    return (timeline_rows,)


@app.cell
def _(con, scope):
    roi_totals = roi.roi_summary(con, scope)
    _top = roi.roi(con, scope, limit=8)
    mo.vstack(
        [
            mo.md(
                "## Return on memory\n\n"
                f"{roi_totals['injections']} context injections showed "
                f"{roi_totals['observations_injected']} observations "
                f"({roi_totals['injected_tokens']:,} tokens); agents fetched "
                f"{roi_totals['fetches']} observations in full, "
                f"{roi_totals['fetches_after_injection']} of them after seeing them injected."
            ),
            mo.ui.table(_top, selection=None) if _top.height else mo.md("_No injections yet._"),
        ]
    )
    return (roi_totals,)


@app.cell
def _():
    sql_form = mo.ui.code_editor(value=DEFAULT_SQL, language="sql", min_height=120).form(
        submit_button_label="Run", bordered=False
    )
    mo.vstack([mo.md("## SQL over the DuckDB views (read-only)"), sql_form])
    return (sql_form,)


@app.cell
def _(con, sql_form):
    sql = sql_form.value or DEFAULT_SQL
    try:
        sql_result = pl.from_arrow(duck.run_sql(con, sql))
        _out = mo.ui.table(sql_result, selection=None, page_size=15)
    except WorkbenchError as exc:
        sql_result, _out = None, mo.callout(mo.md(exc.message), kind="warn")
    _out
    return sql, sql_result


if __name__ == "__main__":
    raise SystemExit(notebooks.run_headless(app, parse_args(), headless_summary))
