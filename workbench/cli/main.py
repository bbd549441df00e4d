"""The ``workbench`` entry point: ``run``. The Typer app is ``cli.app`` (``app`` here too).

``workbench search <words>`` is the command people and agents run most, and as a process it
took ~1 s on a loaded machine, nearly all of it imports (Typer, pydantic, pydantic-settings,
httpx, rich) before the first byte went to the service (issue 21). So ``run`` first offers a
search to ``cli.fast_search``, which answers the common form through the standard library
and declines anything else; only then is the Typer app imported. ``app`` is loaded on first
access, so ``from workbench.cli.main import app`` keeps working.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs start-up: this module is on every command's path
if TYPE_CHECKING:
    import typer


def run() -> None:
    if sys.argv[1:2] == ["search"]:
        # Trigger: `workbench search …`. Why: Typer and pydantic cost most of the command's
        # time. Outcome: the fast path answers, or returns None and the full path runs.
        from workbench.cli.fast_search import main as fast_search

        code = fast_search(sys.argv[2:])
        if code is not None:
            sys.exit(code)
    from workbench.cli.app import app

    app()


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        from workbench.cli.app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    run()
