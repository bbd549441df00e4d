"""The ``workbench`` Typer app. The root help is the quickstart.

The command modules, listed in ``COMMAND_MODULES``, each register their group on ``app``;
only they import what they need, inside the command functions, so ``workbench --help`` stays
fast. The entry point is ``cli.main.run``, which imports this module only when the command
needs Typer (see ``cli.fast_search``).
"""

from __future__ import annotations

import typer

from workbench import __version__
from workbench.cli import (
    agent,
    analytics,
    code,
    corpus,
    data,
    demo,
    folder_memory,
    forget,
    index,
    install,
    mcp,
    models,
    notebook,
    plugin,
    recall,
    rerank,
    service,
    stale,
    team,
    team_mirror,
    transcripts,
)

# Every command group, by name; a new group is one new module plus its line here (as
# ``service.app.ROUTERS`` lists routers; ``tests/test_module_lists.py`` fails on one left out).
COMMAND_MODULES = (
    agent,
    analytics,
    code,
    corpus,
    data,
    demo,
    folder_memory,
    forget,
    index,
    install,
    mcp,
    models,
    notebook,
    plugin,
    recall,
    rerank,
    service,
    stale,
    team,
    team_mirror,
    transcripts,
)

app = typer.Typer(
    name="workbench",
    help=(
        "A local-first memory and knowledge workbench for AI coding agents.\n\n"
        "Quickstart:\n\n"
        "  workbench install        # add the hooks to Claude Code (~/.claude/settings.json)\n\n"
        "  workbench serve --detach # start the local service (hooks also start it)\n\n"
        "  workbench status         # what is stored, queued, failed\n\n"
        "Try it on bundled demo data without touching your own memory:\n\n"
        "  workbench demo           # seeds ./.demo/data and prints what it captured\n\n"
        "Data lives in WORKBENCH_DATA_DIR (default ~/.workbench)."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"workbench {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Root options."""


for _module in COMMAND_MODULES:
    _module.register(app)
