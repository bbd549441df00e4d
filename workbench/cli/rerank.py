"""``workbench rerank train`` / ``build``: the second-stage reranker's models.

``build`` writes the ``maxsim`` stage's token table from the shipped MiniLM (its int8 ONNX
copy; ``recall/rerank_tokens.py``): offline, ~30 s, needed once per venv.

``train`` fits the linear (``features``) stage to your own history.

Reads the store read-only and loads the embedding model in this process (as the evaluate
notebook does: ~5 s), generates questions from the history (``recall/rerank_train.py``), fits
the weights and writes ``<data_dir>/rerank.json`` (derived: delete it to go back to the
built-in default). Prints the training and held-out figures: fused order vs reranked.
The service reads the file on each search (no restart for new weights); the reranker runs
only with ``search_rerank`` on.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    load_settings,
    print_json,
    table,
)

rerank_app = typer.Typer(help="The second-stage reranker of hybrid search.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(rerank_app, name="rerank")


@rerank_app.command("build")
@handle_errors
def build(as_json: JsonOption = False) -> None:
    """Build the maxsim token table from the shipped MiniLM (offline; after `models build`)."""
    from workbench.errors import WorkbenchError
    from workbench.recall import rerank_tokens

    try:
        path = rerank_tokens.build()
    except (FileNotFoundError, PermissionError) as exc:
        raise WorkbenchError(f"cannot build the maxsim token table: {exc}") from None
    if as_json:
        print_json({"path": str(path)})
        return
    typer.echo(f"maxsim token table written to {path}; set search_rerank_method=maxsim to use it")


@rerank_app.command("train")
@handle_errors
def train(
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
    limit: Annotated[int, typer.Option(min=10, max=5000, help="Questions to generate.")] = 400,
    seed: Annotated[int, typer.Option(help="Seed of the question sample and the split.")] = 0,
) -> None:
    """Train the reranker on questions generated from your history; write rerank.json."""
    from workbench.cli.recall_sources import readonly_store
    from workbench.recall import rerank, rerank_train
    from workbench.recall.evaluate import InProcessRanker

    settings = load_settings(data_dir)
    with readonly_store(settings) as store:
        ranker = InProcessRanker(store.conn, settings)
        model, report = rerank_train.train(store.conn, ranker, settings, limit=limit, seed=seed)
    path = rerank.save_model(
        settings, model, report={k: v for k, v in report.items() if k != "weights"}
    )
    report["model"] = str(path)
    # In use only when the second stage runs the ``features`` method (``learned`` is the default).
    report["enabled"] = rerank.enabled(settings) and rerank.method(settings) == "features"
    if as_json:
        print_json(report)
        return
    _print(report)


def _print(report: dict[str, Any]) -> None:
    rows = []
    for part in ("train", "holdout"):
        for order in ("fused", "reranked"):
            m = report[part][order]
            rows.append(
                (
                    part,
                    order,
                    m["n"],
                    f"{m['recall@5']:.3f}",
                    f"{m['recall@10']:.3f}",
                    f"{m['mrr']:.3f}",
                )
            )
    sources = ", ".join(f"{n} from {s}s" for s, n in report["sources"].items())
    table(
        f"rerank: {report['groups']} questions with an answer among the candidates ({sources})",
        ("split", "order", "questions", "R@5", "R@10", "MRR"),
        rows,
    )
    typer.echo(f"wrote {report['model']}")
    if not report["enabled"]:
        typer.echo(
            "search_rerank is off or runs another method: set search_rerank true and"
            " search_rerank_method features in settings.json (or WORKBENCH_SEARCH_RERANK=1,"
            " WORKBENCH_SEARCH_RERANK_METHOD=features) and restart the service to use it"
        )
