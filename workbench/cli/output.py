"""Output shared by every command: ``--json`` for machines, rich tables for people.

``rich`` is imported inside the functions: ``workbench --help`` should not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import typer

from workbench.cli.tables import console, key_values, print_json, table
from workbench.errors import WorkbenchError

__all__ = [
    "DataDirOption",
    "JsonOption",
    "console",
    "handle_errors",
    "key_values",
    "load_settings",
    "print_json",
    "table",
]

if TYPE_CHECKING:
    from workbench.settings import Settings

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
DataDirOption = Annotated[
    str | None,
    typer.Option(
        "--data-dir", "-d", envvar="WORKBENCH_DATA_DIR", help="Data dir (default ~/.workbench)."
    ),
]

P = ParamSpec("P")
R = TypeVar("R")


def load_settings(data_dir: Any = None, **overrides: Any) -> Settings:
    """``workbench.settings.load_settings``, imported on first use.

    Why: pydantic-settings costs ~170 ms to import, and every command module is imported to
    register its commands; only the command that runs should pay for it.
    """
    from workbench.settings import load_settings as load

    return load(data_dir, **overrides)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn a ``WorkbenchError`` into its message on stderr and exit code 1 (no traceback)."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except WorkbenchError as exc:
            typer.secho(f"error: {exc.message}", fg=typer.colors.RED, err=True)
            raise typer.Exit(1) from None

    return wrapper
