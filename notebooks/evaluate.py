import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="workbench · evaluate recall")

with app.setup:
    import argparse
    from typing import Any

    import altair as alt
    import marimo as mo
    import polars as pl

    from workbench import notebooks
    from workbench.errors import WorkbenchError
    from workbench.recall import evaluate

    VECTOR_SOURCES = {
        "auto": "the service's model if it runs, else full text only",
        "service": "the running service (it holds the embedding model)",
        "local": "load the local MiniLM model in this notebook (~5 s)",
        "none": "full text only",
    }


@app.function
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """``--data-dir``, where vectors come from, and which questions to ask."""
    parser = notebooks.base_parser("Evaluate recall settings on your own history.")
    parser.add_argument("--vectors", choices=list(VECTOR_SOURCES), default="auto")
    parser.add_argument("--source", choices=["request", "learned", "both"], default="request")
    parser.add_argument("--limit", type=int, default=None, help="sample this many questions")
    parser.add_argument("--all-projects", action="store_true", help="search across projects")
    return notebooks.parse_known(parser, argv)


@app.function
def make_retriever(choice: str, conn: Any, settings: Any) -> tuple[Any, str]:
    """The retriever for ``choice`` and a sentence saying what it can do."""
    live = notebooks.service(settings) if choice in ("auto", "service") else None
    if live is not None:
        remote = evaluate.ServiceRetriever(live.client)
        why_not = remote.unavailable("vector")
        if choice == "service" or why_not is None:
            return remote, f"ranking through the service at {live.url}" + (
                f"; {why_not}" if why_not else " (full text, vector and hybrid)"
            )
        return evaluate.LocalRetriever(conn), f"full text only: {why_not}"
    if choice == "service":
        return evaluate.LocalRetriever(conn), (
            "the service is not running on this data dir (start it with `workbench serve "
            "--detach`), so only full text runs, here"
        )
    if choice == "local":
        ranker = evaluate.InProcessRanker(conn, settings)
        if ranker.available():
            return evaluate.LocalRetriever(conn, ranker), (
                f"ranking here with {ranker.unavailable_reason}: {ranker.reused} vectors reused "
                f"from the service's cache, {ranker.embedded} embedded now"
            )
        return evaluate.LocalRetriever(conn), f"no local model ({ranker.unavailable_reason})"
    return evaluate.LocalRetriever(conn), (
        "full text only (choose `local` to load the model here, or start the service)"
    )


@app.function
def headless_summary(defs: Any) -> list[str]:
    """What a headless run (``python notebooks/evaluate.py``) computed, in a few lines."""
    evaluation = defs.get("evaluation")
    if evaluation is None:
        return []
    lines = [
        f"evaluated {len(defs.get('questions') or [])} questions from "
        f"{defs['settings'].db_path}: {len(evaluation.rows)} settings swept"
    ]
    best = evaluation.best("recall")
    if best is not None:
        lines.append(
            f"best recall: {best['mode']} at top_k={best['top_k']}"
            + (f", budget {best['budget']}" if best.get("budget") else "")
            + f": recall {best['recall']:.2f}, MRR {best['mrr']:.2f}, ~{best['tokens']:.0f} tokens"
        )
    for mode, why in sorted(getattr(evaluation, "skipped", {}).items()):
        lines.append(f"skipped {mode}: {why}")
    return lines


@app.cell(hide_code=True)
def _():
    mo.md(r"""
    # How well does recall work on *your* history?

    Every prompt you gave your agent is a question whose answer the memory already holds: the
    observations that prompt produced. This notebook turns each session summary's request into
    a question, uses that prompt's observations as the gold evidence, and sweeps the
    retrieval settings — full text, vector or hybrid ranking, how many hits (`top_k`), and a
    token budget — to show **recall@k** and **MRR** against the **tokens** each setting would
    inject into the agent's context.
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
    return conn, settings


@app.cell
def _(args):
    vectors = mo.ui.dropdown(
        {f"{k}: {v}": k for k, v in VECTOR_SOURCES.items()},
        value=f"{args.vectors}: {VECTOR_SOURCES[args.vectors]}",
        label="vectors from",
    )
    source = mo.ui.dropdown(["request", "learned", "both"], value=args.source, label="questions")
    within_project = mo.ui.checkbox(
        value=not args.all_projects, label="search within the question's project"
    )
    mo.hstack([vectors, source, within_project], justify="start")
    return source, vectors, within_project


@app.cell
def _(conn, settings, vectors):
    retriever, retriever_note = make_retriever(vectors.value, conn, settings)
    mo.md(f"Retrieval: {retriever_note}.")
    return (retriever,)


@app.cell
def _(args, conn, source):
    _sources = ("request", "learned") if source.value == "both" else (source.value,)
    questions = evaluate.questions(conn, sources=_sources, limit=args.limit)
    mo.stop(
        not questions,
        mo.callout("No session summary has observations yet: nothing to evaluate.", kind="warn"),
    )
    _sample = [
        {"question": q.text[:120], "project": q.project, "gold": len(q.gold), "source": q.source}
        for q in questions[:6]
    ]
    mo.vstack(
        [
            mo.md(
                f"**{len(questions)} questions** with {sum(len(q.gold) for q in questions)} gold "
                "observations. `learned` questions quote observation facts by construction, so "
                "they are the easy upper bound; `request` is what you actually asked."
            ),
            mo.ui.table(_sample, selection=None),
        ]
    )
    return (questions,)


@app.cell
def _(questions, retriever, within_project):
    evaluation = evaluate.sweep(retriever, questions, scope_project=within_project.value)
    metrics = evaluation.frame()
    _skipped = "".join(f"\n- `{m}`: {why}" for m, why in evaluation.skipped.items())
    mo.callout(mo.md(f"Not evaluated:{_skipped}"), kind="neutral") if _skipped else mo.md("")
    return evaluation, metrics


@app.cell
def _(metrics):
    _free = metrics.filter(pl.col("budget").is_null())
    _recall = (
        alt.Chart(_free)
        .mark_line(point=True)
        .encode(
            x=alt.X("tokens:Q", title="mean tokens injected"),
            y=alt.Y("recall:Q", scale=alt.Scale(domain=[0, 1]), title="recall@k"),
            color="mode:N",
            tooltip=["mode", "top_k", "recall", "hit_rate", "mrr", "tokens"],
        )
        .properties(title="recall@k against the tokens it costs (k = 1, 3, 5, 10, 20)", width=380)
    )
    _labels = _recall.mark_text(dy=-9, fontSize=10).encode(text="top_k:Q")
    _mrr = (
        alt.Chart(_free)
        .mark_line(point=True)
        .encode(
            x=alt.X("top_k:O", title="top_k"),
            y=alt.Y("mrr:Q", scale=alt.Scale(domain=[0, 1]), title="MRR"),
            color="mode:N",
            tooltip=["mode", "top_k", "mrr", "hit_rate"],
        )
        .properties(title="mean reciprocal rank", width=260)
    )
    mo.hstack([mo.ui.altair_chart(_recall + _labels), mo.ui.altair_chart(_mrr)], justify="start")
    return


@app.cell
def _(metrics):
    _deepest = metrics.filter(pl.col("top_k") == metrics["top_k"].max()).with_columns(
        budget_label=pl.col("budget").cast(pl.Utf8).fill_null("no budget")
    )
    _chart = (
        alt.Chart(_deepest)
        .mark_bar()
        .encode(
            x=alt.X(
                "budget_label:N", title="token budget", sort=["250", "500", "1000", "no budget"]
            ),
            y=alt.Y("recall:Q", scale=alt.Scale(domain=[0, 1])),
            color="mode:N",
            xOffset="mode:N",
            tooltip=["mode", "budget_label", "recall", "tokens"],
        )
        .properties(
            title=f"recall at top_k = {metrics['top_k'].max()} under a token budget", width=420
        )
    )
    mo.vstack([mo.ui.altair_chart(_chart), mo.ui.table(metrics, selection=None, page_size=10)])
    return


@app.cell
def _(evaluation):
    best = evaluation.best("recall")
    mo.stop(best is None)
    _k = 5
    _missed = evaluation.misses(best["mode"], _k)
    mo.vstack(
        [
            mo.md(
                f"**Best recall:** `{best['mode']}` at top_k={best['top_k']}"
                + (f", budget {best['budget']}" if best["budget"] else "")
                + f" — recall {best['recall']:.2f}, hit rate {best['hit_rate']:.2f}, "
                f"MRR {best['mrr']:.2f}, ~{best['tokens']:.0f} tokens. "
                f"{len(_missed)} questions have no gold observation in `{best['mode']}`'s top {_k}:"
            ),
            mo.ui.table(
                [{"question": q.text, "project": q.project, "gold": len(q.gold)} for q in _missed],
                selection=None,
                page_size=8,
            ),
        ]
    )
    return (best,)


if __name__ == "__main__":
    raise SystemExit(notebooks.run_headless(app, parse_args(), headless_summary))
