import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="workbench · corpus builder")

with app.setup:
    import argparse
    from datetime import date
    from typing import Any

    import altair as alt
    import marimo as mo
    import polars as pl

    from workbench import notebooks
    from workbench.clock import iso_from_ms, now_ms
    from workbench.errors import WorkbenchError
    from workbench.knowledge import corpus as corpora
    from workbench.knowledge.corpus_filter import DEFAULT_LIMIT, SearchFn, parse_filter, select
    from workbench.models import OBSERVATION_TYPES
    from workbench.platform_filter import known_platforms
    from workbench.recall.filters import SearchFilters


@app.function
def day_arg(text: str | None, first: date, last: date, default: date) -> date:
    """An ISO date argument, kept inside the memory's span (the widget refuses others)."""
    if not text:
        return default
    return min(max(date.fromisoformat(text), first), last)


@app.function
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """``--data-dir``, the filter's starting values, and ``--save`` to build it headless."""
    parser = notebooks.base_parser("Build a knowledge corpus from the memory.")
    parser.add_argument("--project")
    parser.add_argument("--types", help="csv of observation types")
    parser.add_argument("--concepts", help="csv")
    parser.add_argument("--files", help="csv of path prefixes")
    parser.add_argument("--query")
    parser.add_argument("--since", help="ISO date")
    parser.add_argument("--until", help="ISO date")
    parser.add_argument("--platform", help="one agent platform, e.g. gemini-cli")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    parser.add_argument("--name", default="my-corpus")
    parser.add_argument("--description", default="")
    parser.add_argument("--save", action="store_true", help="save the corpus (via the service)")
    return notebooks.parse_known(parser, argv)


@app.function
def csv(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


@app.function
def wire_filter(
    project: str | None,
    types: list[str],
    concepts: list[str],
    files: str,
    query: str,
    days: tuple[date, date] | None,
    bounds: tuple[date | None, date | None],
    limit: int,
    platform: str | None = None,
) -> dict[str, Any]:
    """The corpus filter as the API takes it.

    Dates are included only when the range was narrowed: a stored ``until`` equal to today's
    last day would stop ``rebuild`` from ever picking up newer work.
    """
    wire: dict[str, Any] = {"limit": int(limit)}
    if project:
        wire["project"] = project
    if types:
        wire["types"] = list(types)
    if concepts:
        wire["concepts"] = list(concepts)
    if csv(files):
        wire["files"] = csv(files)
    if query.strip():
        wire["query"] = query.strip()
    if platform:
        wire["platform_source"] = platform
    if days is not None:
        start, end = days
        if bounds[0] is not None and start > bounds[0]:
            wire["since"] = start.isoformat()
        if bounds[1] is not None and end < bounds[1]:
            wire["until"] = end.isoformat()
    return wire


@app.function
def service_search(client: Any) -> SearchFn:
    """A ``SearchFn`` over the service's ``/api/search``: hybrid with the service's vectors."""

    def run(query: str, filters: SearchFilters, limit: int) -> list[int]:
        params: dict[str, Any] = {
            "query": query,
            "kinds": "observations",
            "mode": "hybrid",
            "format": "json",
            "project": filters.project,
            "types": ",".join(filters.obs_types) or None,
            "concepts": ",".join(filters.concepts) or None,
            "files": ",".join(filters.files) or None,
            "since": filters.date_start,
            "until": filters.date_end,
            "platform_source": filters.platform_source,
        }
        ids: list[int] = []
        for offset in range(0, limit, 100):
            page = client.get(
                "/api/search", **params, limit=min(100, limit - offset), offset=offset
            )
            ids.extend(int(hit["id"]) for hit in page["observations"])
            if len(page["observations"]) < 100:
                break
        return list(dict.fromkeys(ids))

    return run


@app.function
def preview_name(text: str) -> str:
    """The typed name when it is a valid corpus name (the rule is checked again on save)."""
    try:
        return corpora.validate_name(text)
    except WorkbenchError:
        return "preview"


@app.function
def observations_frame(corpus: corpora.Corpus) -> pl.DataFrame:
    """The corpus's observations as a table (newest last, as the corpus keeps them)."""
    rows = [
        {
            "id": o.id,
            "created_at": o.created_at[:16].replace("T", " "),
            "day": o.created_at[:10],
            "project": o.project,
            "type": o.type,
            "title": o.title,
            "files": ", ".join(dict.fromkeys(o.files_modified + o.files_read)),
        }
        for o in corpus.observations
    ]
    text = dict.fromkeys(("created_at", "day", "project", "type", "title", "files"), pl.Utf8)
    return pl.DataFrame(rows, schema={"id": pl.Int64, **text})


@app.function
def filter_text(wire: dict[str, Any] | None) -> str:
    """``project=payments-api, limit=500`` (the parts that are set)."""
    parts = [f"{k}={v}" for k, v in (wire or {}).items() if v not in (None, "", [])]
    return ", ".join(parts) or "everything"


@app.function
def headless_summary(defs: Any) -> list[str]:
    """What a headless run (``python notebooks/corpus_builder.py``) computed, in a few lines."""
    preview = defs.get("preview")
    if preview is None:
        return []
    stats = preview.stats
    lines = [
        f"corpus preview from {defs['settings'].db_path}: {stats.observation_count} "
        f"observations, ~{stats.token_estimate:,} tokens (filter: {filter_text(defs.get('wire'))})"
    ]
    saved = defs.get("saved")
    if saved:
        lines.append(
            f"saved corpus {saved['name']}: {saved['stats']['observation_count']} observations"
        )
    elif defs["args"].save:
        lines.append("not saved (see the error above)")
    else:
        lines.append("not saved (pass --save to save it through the service)")
    return lines


@app.cell(hide_code=True)
def _():
    mo.md("""
    # Corpus builder

    A **corpus** is a named, frozen slice of your memory that the knowledge agent is primed
    with. Pick the slice with the filters, check what it holds (the table, the charts and
    the token estimate update as you go), then save it. Saving goes through the workbench
    service, which keeps the stored filter so `rebuild` can pull in newer work later.
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
        store = notebooks.open_store(settings)
        problem = None
    except WorkbenchError as exc:
        store, problem = None, exc.message
    mo.stop(store is None, mo.callout(mo.md(f"**No memory to read.** {problem}"), kind="danger"))
    conn = store.conn
    catalogue = notebooks.catalogue(conn)
    live = notebooks.service(settings)
    mo.md(
        f"Memory: `{settings.data_dir}` — {catalogue.observations} observations in "
        f"{len(catalogue.projects)} projects, {catalogue.first_day} to {catalogue.last_day}. "
        + (
            f"Service: running at {live.url}."
            if live
            else "Service: not running (it starts when you save)."
        )
    )
    return catalogue, conn, live, settings


@app.cell
def _(args, catalogue):
    _first, _last = catalogue.first_day or date.today(), catalogue.last_day or date.today()
    _since = day_arg(args.since, _first, _last, _first)
    _until = day_arg(args.until, _since, _last, _last)
    project = mo.ui.dropdown(
        ["(all)", *catalogue.projects],
        value=args.project if args.project in catalogue.projects else "(all)",
        label="project",
    )
    types = mo.ui.multiselect(
        list(OBSERVATION_TYPES),
        value=[t for t in csv(args.types) if t in OBSERVATION_TYPES],
        label="types",
    )
    concepts = mo.ui.multiselect(
        catalogue.concepts,
        value=[c for c in csv(args.concepts) if c in catalogue.concepts],
        label="concepts",
    )
    files = mo.ui.text(value=args.files or "", placeholder="app/services, src/api", label="files")
    query = mo.ui.text(value=args.query or "", placeholder="e.g. webhook signature", label="query")
    days = mo.ui.date_range(start=_first, stop=_last, value=(_since, _until), label="dates")
    platform = mo.ui.dropdown(
        ["(all)", *known_platforms()],
        value=args.platform if args.platform in known_platforms() else "(all)",
        label="platform",
    )
    limit = mo.ui.number(start=1, stop=10_000, value=args.limit, label="limit")
    name = mo.ui.text(value=args.name, label="corpus name")
    description = mo.ui.text(value=args.description, label="description", full_width=True)
    mo.vstack(
        [
            mo.hstack([project, types, concepts], justify="start"),
            mo.hstack([files, query], justify="start"),
            mo.hstack([days, platform, limit], justify="start"),
        ]
    )
    return (
        concepts,
        days,
        description,
        files,
        limit,
        name,
        platform,
        project,
        query,
        types,
    )


@app.cell
def _(
    catalogue,
    concepts,
    conn,
    days,
    description,
    files,
    limit,
    live,
    name,
    platform,
    project,
    query,
    types,
):
    wire = wire_filter(
        None if project.value == "(all)" else project.value,
        types.value,
        concepts.value,
        files.value,
        query.value,
        days.value,
        (catalogue.first_day, catalogue.last_day),
        limit.value,
        None if platform.value == "(all)" else platform.value,
    )
    try:
        flt = parse_filter(wire)
        invalid = None
    except WorkbenchError as exc:
        flt, invalid = None, exc.message
    mo.stop(flt is None, mo.callout(mo.md(f"**Invalid filter.** {invalid}"), kind="warn"))
    # Trigger: a query. Why: the saved corpus ranks it with the service's hybrid search, and
    # the preview should show the same observations. Outcome: the service when it runs, else
    # full text here, and the note below says which.
    ranked_by = (
        "the service's hybrid search" if live else "full text (start the service for hybrid)"
    )
    chosen = select(conn, flt, service_search(live.client) if (flt.query and live) else None)
    _stamp = iso_from_ms(now_ms())
    preview = corpora.assemble(
        preview_name(name.value),
        description.value,
        flt,
        chosen,
        created_at=_stamp,
        updated_at=_stamp,
    )
    frame = observations_frame(preview)
    return flt, frame, preview, ranked_by, wire


@app.cell
def _(flt, preview, ranked_by):
    _stats = preview.stats
    _span = (
        f"{_stats.date_range.earliest[:10]} → {_stats.date_range.latest[:10]}"
        if _stats.date_range.earliest
        else "—"
    )
    mo.vstack(
        [
            mo.hstack(
                [
                    mo.stat(_stats.observation_count, label="observations"),
                    mo.stat(f"{_stats.token_estimate:,}", label="tokens to prime (estimate)"),
                    mo.stat(_span, label="date range"),
                    mo.stat(len(_stats.type_breakdown), label="types"),
                ],
                justify="start",
            ),
            mo.md(
                f"Filter: `{flt.describe()}`"
                + (f" · query ranked by {ranked_by}" if flt.query else "")
            ),
        ]
    )
    return


@app.cell
def _(frame):
    mo.stop(frame.is_empty(), mo.callout("No observation matches this filter.", kind="neutral"))
    _types = (
        alt.Chart(frame.group_by("type").len(name="observations"))
        .mark_bar()
        .encode(
            x=alt.X("observations:Q"),
            y=alt.Y("type:N", sort="-x"),
            color=alt.Color("type:N", legend=None),
            tooltip=["type", "observations"],
        )
        .properties(title="type breakdown", height=180, width=260)
    )
    _days = (
        alt.Chart(frame.group_by("day", "type").len(name="observations"))
        .mark_bar()
        .encode(
            x=alt.X("day:T", title="day"),
            y=alt.Y("observations:Q", stack=True),
            color=alt.Color("type:N"),
            tooltip=["day", "type", "observations"],
        )
        .properties(title="activity over time", height=180, width=420)
    )
    mo.hstack([mo.ui.altair_chart(_types), mo.ui.altair_chart(_days)], justify="start")
    return


@app.cell
def _(frame):
    mo.ui.table(frame, page_size=12, selection=None, label="matching observations (oldest first)")
    return


@app.cell
def _(description, name):
    save_button = mo.ui.run_button(label="Save corpus", kind="success")
    mo.vstack([mo.md("## Save"), mo.hstack([name, save_button], justify="start"), description])
    return (save_button,)


@app.cell
def _(args, description, name, preview, save_button, settings, wire):
    mo.stop(
        not (save_button.value or args.save),
        mo.md("Name the corpus and press **Save corpus** (it replaces a corpus of that name)."),
    )
    try:
        _conn = notebooks.writer(settings)
        with _conn.client as _client:
            saved = _client.post(
                "/api/corpus", {"name": name.value, "description": description.value, **wire}
            )
        _how = " (started the service)" if _conn.started else ""
        _drift = saved["stats"]["observation_count"] - preview.stats.observation_count
        _note = (
            ""
            if _drift == 0
            else f" ({_drift:+d} against the preview: new work arrived or a query was re-ranked)"
        )
        save_result = mo.callout(
            mo.md(
                f"Saved **{saved['name']}**{_how}: {saved['stats']['observation_count']} "
                f"observations, ~{saved['stats']['token_estimate']:,} tokens{_note}. "
                "Open it in the `knowledge_agent` notebook."
            ),
            kind="success",
        )
    except WorkbenchError as exc:
        saved, save_result = None, mo.callout(mo.md(f"**Not saved.** {exc.message}"), kind="danger")
    save_result
    return


@app.cell
def _(settings):
    existing = [c.model_dump() for c in corpora.list_all(settings).corpora]
    rebuild_choice = mo.ui.dropdown(
        [c["name"] for c in existing if "error" not in c], label="rebuild a corpus"
    )
    rebuild_button = mo.ui.run_button(label="Rebuild")
    _rows = [
        {
            "name": c["name"],
            "observations": c.get("stats", {}).get("observation_count"),
            "tokens": c.get("stats", {}).get("token_estimate"),
            "filter": str(c.get("filter", c.get("error", ""))),
            "primed": c.get("primed", False),
        }
        for c in existing
    ]
    mo.vstack(
        [
            mo.md("## Existing corpora"),
            mo.ui.table(_rows, selection=None) if _rows else mo.md("_none yet_"),
            mo.hstack([rebuild_choice, rebuild_button], justify="start"),
        ]
    )
    return rebuild_button, rebuild_choice


@app.cell
def _(rebuild_button, rebuild_choice, settings):
    mo.stop(not (rebuild_button.value and rebuild_choice.value))
    try:
        _conn = notebooks.writer(settings)
        with _conn.client as _client:
            _rebuilt = _client.post(f"/api/corpus/{rebuild_choice.value}/rebuild")
        _out = mo.md(
            f"Rebuilt **{_rebuilt['name']}**: +{_rebuilt['added']} / −{_rebuilt['removed']} "
            f"observations, {_rebuilt['stats']['observation_count']} in all; its agent "
            "conversation was cleared (prime it again)."
        )
    except WorkbenchError as exc:
        _out = mo.callout(mo.md(f"**Not rebuilt.** {exc.message}"), kind="danger")
    _out
    return


if __name__ == "__main__":
    raise SystemExit(notebooks.run_headless(app, parse_args(), headless_summary))
