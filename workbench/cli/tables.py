"""What people and machines see: JSON on stdout, rich tables. No Typer, no pydantic.

Apart from ``cli.output`` (which re-exports these) because the fast paths (``cli.fast_*``)
print with them and must not import Typer; ``rich`` is imported inside the functions, so a
command that prints JSON never pays for it, and a table of plain text on a pipe is drawn by
``cli.plain_text`` (the same bytes) without it.
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
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    from workbench.cli.plain_text import table as plain_table

    drawn = plain_table(title, list(columns), cells)
    if drawn is not None:  # the same bytes, without importing rich (cli.plain_text)
        sys.stdout.write(drawn)
        return
    from rich.table import Table
    from rich.text import Text

    grid = Table(title=Text(title), title_justify="left", header_style="bold")
    for column in columns:
        grid.add_column(Text(column), overflow="fold")
    for row_cells in cells:
        grid.add_row(*(Text(text) for text in row_cells))
    console().print(grid)


def key_values(title: str, pairs: Iterable[tuple[str, Any]]) -> None:
    table(title, ["", ""], pairs)


def print_line(*parts: str | tuple[str, str], style: str = "") -> None:
    """``console().print(Text.assemble(*parts, style=style))``: text, never read as markup.

    ``parts`` are strings or ``(string, style)`` pairs, as ``Text.assemble`` takes them.
    """
    from workbench.cli.plain_text import line

    drawn = line("".join(part if isinstance(part, str) else part[0] for part in parts))
    if drawn is not None:  # the same bytes, without importing rich (cli.plain_text)
        sys.stdout.write(drawn)
        return
    from rich.text import Text

    console().print(Text.assemble(*parts, style=style))
