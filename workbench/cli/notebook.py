"""``workbench notebook [name]``: open a marimo notebook on the active data dir.

Runs ``python -m marimo edit notebooks/<name>.py -- --data-dir <dir>`` with this venv's
interpreter (``--app`` uses ``marimo run``, the read-only app view), so the notebook reads
the same memory as every other command. With no name it lists the notebooks; an unknown
name lists them too and fails. ``--html FILE`` runs it headless (``marimo export html``;
arguments after ``--`` go to the notebook) and removes the snapshot of its outputs marimo
writes beside the notebook (``notebook_files.snapshot_path``: a copy of the memory outside
the data dir), as forget does (zeros, then removed). marimo is started as a subprocess:
``workbench`` itself never imports it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.cli.output import DataDirOption, handle_errors, table


def register(app: typer.Typer) -> None:
    app.command(
        "notebook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )(notebook)


def command(
    path: Path,
    data_dir: Path,
    *,
    app_mode: bool,
    headless: bool,
    port: int | None,
    html: Path | None = None,
    extra: list[str] | None = None,
) -> list[str]:
    """The marimo command line for one notebook (``html``: ``marimo export html`` to it)."""
    if html is not None:
        cmd = [sys.executable, "-m", "marimo", "export", "html", str(path), "-o", str(html), "-f"]
    else:
        cmd = [sys.executable, "-m", "marimo", "run" if app_mode else "edit", str(path)]
        if headless:
            cmd.append("--headless")
        if port is not None:
            cmd += ["--port", str(port)]
    return [*cmd, "--", "--data-dir", str(data_dir), *(extra or [])]


def _list(data_dir: Path) -> None:
    from workbench.notebook_files import NOTEBOOKS, NOTEBOOKS_DIR

    table(
        f"notebooks (open one with `workbench notebook NAME`; data dir {data_dir})",
        ["name", "what it shows", "file"],
        [(name, what, NOTEBOOKS_DIR / f"{name}.py") for name, what in NOTEBOOKS.items()],
    )


@handle_errors
def notebook(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Notebook to open; omit to list them.")] = None,
    data_dir: DataDirOption = None,
    app_mode: Annotated[
        bool, typer.Option("--app", help="Open as a read-only app (marimo run).")
    ] = False,
    headless: Annotated[bool, typer.Option(help="Do not open a browser.")] = False,
    port: Annotated[int | None, typer.Option(help="Port for marimo's server.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the marimo command instead of running it.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Run it headless and write its outputs to this HTML file (marimo export "
            "html), leaving no snapshot beside the notebook. Arguments after -- go to the "
            "notebook.",
        ),
    ] = None,
) -> None:
    """Open a marimo notebook (corpus builder, knowledge agent, analytics, evaluate)."""
    from workbench.errors import MissingDependency, WorkbenchError
    from workbench.notebook_files import NOTEBOOKS, snapshot_path
    from workbench.notebooks import notebook_path, stopping_what_it_starts
    from workbench.settings import load_settings
    from workbench.shred import shred

    settings = load_settings(data_dir)
    folder = settings.data_dir
    if name is None:
        _list(folder)
        return
    if name not in NOTEBOOKS:
        _list(folder)
        raise WorkbenchError(f"no notebook named {name!r}; pick one of: {', '.join(NOTEBOOKS)}")
    cmd = command(
        notebook_path(name),
        folder,
        app_mode=app_mode,
        headless=headless,
        port=port,
        html=html,
        extra=list(ctx.args),
    )
    if dry_run:
        typer.echo(" ".join(cmd))
        return
    if importlib.util.find_spec("marimo") is None:
        raise MissingDependency("marimo", "workbench notebook")
    if not (folder / "workbench.db").is_file():
        typer.echo(
            f"note: there is no memory in {folder} yet; try `workbench demo` and then "
            f"`workbench notebook {name} --data-dir .demo/data`",
            err=True,
        )
    env = dict(os.environ, WORKBENCH_DATA_DIR=str(folder))
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    if html is None:
        raise typer.Exit(subprocess.call(cmd, env=env))
    with stopping_what_it_starts(settings):  # a headless run leaves no daemon behind
        code = subprocess.call(cmd, env=env)
    # Trigger: marimo's export also writes a snapshot of every output beside the notebook,
    # outside the data dir. Why: it holds the memory the notebook showed, where neither the
    # data dir's owner nor forget looks. Outcome: the HTML the user asked for, and no copy.
    if (snapshot := snapshot_path(name)).is_file():
        shred(snapshot)
    raise typer.Exit(code)
