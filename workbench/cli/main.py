"""The ``workbench`` entry point: ``run``. The Typer app is ``cli.app`` (``app`` here too).

``workbench search | timeline | show`` are the commands people and agents run most, and as
processes they took ~1-1.3 s on a loaded machine, nearly all of it imports (Typer, pydantic,
pydantic-settings, httpx, rich) before the first byte went to the service (issue 21). So
``run`` first offers them to their fast paths (``cli.fast_search``, ``cli.fast_timeline``,
``cli.fast_show``), which answer the common forms through the standard library and decline
anything else; only then is the Typer app imported. ``app`` is loaded on first access, so
``from workbench.cli.main import app`` keeps working.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs start-up: this module is on every command's path
if TYPE_CHECKING:
    import typer


def run() -> None:
    command = sys.argv[1:2]
    if command in (["search"], ["timeline"], ["show"]):
        # Trigger: `workbench search | timeline | show …`. Why: Typer and pydantic cost most
        # of the command's time. Outcome: the fast path answers, or returns None and the
        # full path runs.
        code = _fast_path(command[0], sys.argv[2:])
        if code is not None:
            sys.exit(code)
    from workbench.cli.app import app

    app()


def _fast_path(command: str, argv: list[str]) -> int | None:
    """The command's fast path: its exit code, or None when it declines."""
    if command == "search":
        from workbench.cli.fast_search import main as search

        return search(argv)
    if command == "timeline":
        from workbench.cli.fast_timeline import main as timeline

        return timeline(argv)
    from workbench.cli.fast_show import main as show

    return show(argv)


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        from workbench.cli.app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    run()
