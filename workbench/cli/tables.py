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
    from rich.table import Table

    grid = Table(title=title, title_justify="left", header_style="bold")
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*("" if v is None else str(v) for v in row))
    console().print(grid)


def key_values(title: str, pairs: Iterable[tuple[str, Any]]) -> None:
    table(title, ["", ""], pairs)
