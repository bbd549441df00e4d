"""``workbench folder-memory generate | clean``: the folder memory files, by hand.

``generate`` writes (or refreshes) the "recent activity" section in the memory file of each
folder the project's observations touched; ``clean`` takes every such section out again and
deletes files that held nothing else. ``--dry-run`` shows the same table without writing.
Both work whether or not ``folder_memory_files`` is on (the setting only makes the service run
``generate`` after each summary). Reads the store read-only: no service needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from workbench.cli.output import DataDirOption, JsonOption, handle_errors, load_settings
from workbench.errors import InvalidInput

if TYPE_CHECKING:
    from workbench.settings import Settings

folder_app = typer.Typer(
    name="folder-memory",
    help="Folder memory files: a recent-activity section in each touched folder's CLAUDE.md.",
    no_args_is_help=True,
)

RootOption = Annotated[
    Path | None,
    typer.Option(
        "--root", help="The checkout's folder (default: the git root of the cwd; a worktree's own)."
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
]


def register(app: typer.Typer) -> None:
    app.add_typer(folder_app, name="folder-memory")


def _root(root: Path | None) -> Path:
    from workbench.folder_memory import places
    from workbench.locate import checkout_root

    chosen = places.real(root if root is not None else Path.cwd())
    if not chosen.is_dir():
        raise InvalidInput(f"--root {chosen} is not a folder; name the project's folder")
    if root is None:  # the cwd's checkout (a linked worktree is its own), else the cwd
        checkout = checkout_root(str(chosen))
        chosen = places.real(checkout) if checkout is not None else chosen
    return chosen


def _carry_out(
    items: list[Any], verb: str, dry_run: bool, settings: Settings, root: Path, json_out: bool
) -> None:
    """How both commands end: write the planned items (none under ``--dry-run``), then the
    table of what was (or would be) done."""
    from workbench.folder_memory import apply

    done = items if dry_run else apply.carry_out(items)
    _show(
        f"folder memory ({settings.folder_memory_filename}) under {root}: {verb}",
        done,
        root,
        json_out,
    )


def _show(title: str, items: list[Any], root: Path, json_out: bool) -> None:
    from workbench.cli.output import print_json, table

    rows = [
        {
            "folder": str(i.folder.relative_to(root))
            if i.folder.is_relative_to(root)
            else str(i.folder),
            "file": i.file.name,
            "action": i.action,
            "observations": i.observations,
            "reason": i.reason,
        }
        for i in items
    ]
    if json_out:
        print_json(rows)
        return
    table(
        title,
        ["folder", "file", "action", "observations", "reason"],
        [list(r.values()) for r in rows],
    )
    if not rows:
        typer.echo("nothing to do")


@folder_app.command("generate")
@handle_errors
def generate(
    root: RootOption = None,
    dry_run: DryRunOption = False,
    data_dir: DataDirOption = None,
    json_out: JsonOption = False,
) -> None:
    """Write the recent-activity section into each touched folder's memory file."""
    from workbench.folder_memory import plan
    from workbench.store.connection import connect

    settings = load_settings(data_dir)
    chosen = _root(root)
    if not settings.db_path.exists():
        raise InvalidInput(f"no store at {settings.db_path}: nothing has been recorded yet")
    conn = connect(settings.db_path, readonly=True)
    try:
        items = plan.generate(
            conn,
            chosen,
            settings.folder_memory_filename,
            settings.folder_memory_observations,
            settings.folder_memory_exclude,
        )
    finally:
        conn.close()
    _carry_out(items, "would change" if dry_run else "changed", dry_run, settings, chosen, json_out)


@folder_app.command("clean")
@handle_errors
def clean(
    root: RootOption = None,
    dry_run: DryRunOption = False,
    data_dir: DataDirOption = None,
    json_out: JsonOption = False,
) -> None:
    """Take workbench's section out of every memory file under the root (keep the rest)."""
    from workbench.folder_memory import plan

    settings = load_settings(data_dir)
    chosen = _root(root)
    items = plan.clean(chosen, settings.folder_memory_filename)
    _carry_out(items, "would clean" if dry_run else "cleaned", dry_run, settings, chosen, json_out)
