"""What people and machines see: JSON on stdout, rich tables. No Typer, no pydantic.

Apart from ``cli.output`` (which re-exports these) because ``cli.fast_search`` prints with
them and must not import Typer; ``rich`` is imported inside the functions, so a command that
prints JSON never pays for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any


def console() -> Any:
    from rich.console import Console

    return Console()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A table whose title, headers and cells are shown as written.

    They are memory text, paths, queries, type signatures: rich would read
    ``Callable[[str], str]`` or ``[bold]`` in a string as markup, dropping or restyling text.
    A ``Text`` is never parsed (``escape`` would double a trailing backslash).
    """
    from rich.table import Table
    from rich.text import Text

    grid = Table(title=Text(title), title_justify="left", header_style="bold")
    for column in columns:
        grid.add_column(Text(column), overflow="fold")
    for row in rows:
        grid.add_row(*(Text("" if v is None else str(v)) for v in row))
    console().print(grid)


def key_values(title: str, pairs: Iterable[tuple[str, Any]]) -> None:
    table(title, ["", ""], pairs)
