"""rich's table and line wrapping for plain text on a pipe, in the standard library, or None.

``workbench search | timeline | show`` print rich tables. Importing and running rich costs
~75 ms of CPU per command (~25 ms import, ~35-50 ms laying out three tables of twenty rows),
two thirds of a fast-path search as a process (issue 21). When nothing rich would style
reaches the output (stdout is not a terminal and nothing forces one) and the text is plain
(printable ASCII, newlines, ``…``), rich's output is a pure function of the text and the
width, and this module computes the same bytes: ``Table(title=…, title_justify="left",
header_style="bold")`` with ``overflow="fold"`` columns in the ``HEAVY_HEAD`` box, and
``Console.print`` of a line. It is a port of rich's own steps (rich 15), named after them:
``Text.wrap`` (``_wrap.divide_line``, ``rstrip_end``, ``truncate``), ``Text.__rich_measure__``,
``Padding``, ``Table._calculate_column_widths`` (``_collapse_widths``, ``ratio_reduce``) and
``Table._render``. ``tests/test_plain_text.py`` compares it with the installed rich on
generated tables and lines, so a rich upgrade that changes its layout fails there first.

Every function returns None (the caller then uses rich) when its case is not that one: a
terminal, ``FORCE_COLOR``/``TTY_COMPATIBLE``, an IPython or notebook kernel, an encoding
rich would draw ASCII boxes for, an odd ``COLUMNS``, any other character, or a column too
narrow to hold a character.
"""

from __future__ import annotations

import builtins
import os
import re
import sys

TYPE_CHECKING = False  # typing costs start-up
if TYPE_CHECKING:
    from collections.abc import Sequence

PLAIN = re.compile(r"[ -~\n…]*")  # one cell each (and the newline)
WORD = re.compile(r"\s*\S+\s*")  # rich._wrap.re_word
TRAILING = re.compile(r"\s+$")  # rich.text._re_whitespace
# HEAVY_HEAD's pieces: (left, line, cross, right) for the rules, the edge for the rows
TOP = ("┏", "━", "┳", "┓")
HEAD = "┃"  # the header row's edges and dividers
UNDER = ("┡", "━", "╇", "┩")  # the rule under the header
BODY = "│"
BOTTOM = ("└", "─", "┴", "┘")
PADDING = 2  # a space each side of a cell: Table's default padding (0, 1)


def console_width() -> int | None:
    """The width rich's ``Console()`` lays out to, when it would print no styles; else None."""
    try:
        if sys.platform == "win32" or sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):  # no stdout, or a closed one: rich's to handle
        return None
    if os.environ.get("FORCE_COLOR") is not None or os.environ.get("TTY_COMPATIBLE", ""):
        return None
    if "get_ipython" in vars(builtins) or os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        return None  # rich may see a notebook (its width, its HTML): rich's to handle
    if not (getattr(sys.stdout, "encoding", None) or "").lower().startswith("utf"):
        return None  # rich would draw the ASCII box
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
        return width if width >= 20 else None
    for descriptor in (0, 1, 2):  # rich's _STD_STREAMS: the first terminal's width
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        return width if width >= 20 else None
    return 80


def plain(text: str) -> bool:
    return PLAIN.fullmatch(text) is not None


def divide_line(text: str, width: int) -> list[int]:
    """``rich._wrap.divide_line`` with ``fold=True``, for text of one cell per character."""
    breaks: list[int] = []
    offset = 0
    for match in WORD.finditer(text):
        start, word = match.start(), match.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            chunks = [word[i : i + width] for i in range(0, len(word), width)]
            for k, chunk in enumerate(chunks):
                if start:
                    breaks.append(start)
                if k == len(chunks) - 1:
                    offset = len(chunk)
                else:
                    start += len(chunk)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks


def wrap(text: str, width: int, *, pad: bool) -> list[str]:
    """``Text(text).wrap(width, justify="left" if pad else "default", overflow="fold")``."""
    out: list[str] = []
    for line in text.split("\n"):
        bounds = [0, *divide_line(line, width), len(line)]
        for start, end in zip(bounds, bounds[1:], strict=False):
            piece = line[start:end]
            if len(piece) > width:  # rstrip_end: drop the trailing blanks past the width
                blanks = TRAILING.search(piece)
                if blanks is not None:
                    piece = piece[: len(piece) - min(len(blanks.group(0)), len(piece) - width)]
            piece = piece[:width]
            out.append(piece.ljust(width) if pad else piece)
    return out


def measure(text: str, limit: int) -> tuple[int, int]:
    """A cell's (minimum, maximum) width with its padding: ``Padding`` over ``Text``."""
    if limit - PADDING < 1:
        return limit, limit
    inner = limit - PADDING
    lines = text.splitlines()
    widest = max((len(line) for line in lines), default=0)
    words = text.split()
    least = max((len(word) for word in words), default=widest)
    least = min(max(0, least), widest)
    least, widest = min(least, inner), min(widest, inner)
    return min(least + PADDING, limit), min(widest + PADDING, limit)


def column_width(cells: list[str], limit: int) -> int:
    """``Table._measure_column(...).maximum`` for a flexible column."""
    if limit < 1:
        return 0
    return min(max(measure(cell, limit)[1] for cell in cells), limit)


def ratio_reduce(
    total: int, ratios: list[int], maximums: list[int], values: list[int]
) -> list[int]:
    ratios = [ratio if most else 0 for ratio, most in zip(ratios, maximums, strict=True)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    left = total
    result: list[int] = []
    for ratio, most, value in zip(ratios, maximums, values, strict=True):
        if ratio and total_ratio > 0:
            cut = min(most, round(ratio * left / total_ratio))
            result.append(value - cut)
            left -= cut
            total_ratio -= ratio
        else:
            result.append(value)
    return result


def widths_of(columns: list[list[str]], limit: int) -> list[int]:
    """``Table._calculate_column_widths`` (every column flexible, no expand, no min width)."""
    widths = [column_width(cells, limit) or 1 for cells in columns]
    if sum(widths) > limit:
        excess = sum(widths) - limit
        while sum(widths) and excess > 0:  # _collapse_widths, every column wrapable
            widest = max(widths)
            second = max((w if w != widest else 0) for w in widths)
            if not widest - second:
                break
            ratios = [1 if w == widest else 0 for w in widths]
            widths = ratio_reduce(
                excess, ratios, [min(excess, widest - second)] * len(widths), widths
            )
            excess = sum(widths) - limit
        if sum(widths) > limit:
            widths = ratio_reduce(sum(widths) - limit, [1] * len(widths), widths, widths)
        widths = [column_width(cells, width) for cells, width in zip(columns, widths, strict=True)]
    return widths


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str | None:
    """What ``cli.tables.table`` prints through rich, or None when this module cannot say."""
    width = console_width()
    cells = [[column, *(row[k] for row in rows)] for k, column in enumerate(columns)]
    if width is None or not all(plain(text) for text in (title, *columns)):
        return None
    if not all(plain(text) for column in cells for text in column):
        return None
    widths = widths_of(cells, width - 2 - (len(columns) - 1))
    if min(widths) <= PADDING:
        return None  # a column that holds no character: rich's corner, not ours
    table_width = sum(widths) + 2 + len(widths) - 1
    out = wrap(title, table_width, pad=True) if title else []
    out.append(_rule(TOP, widths))
    for index, row in enumerate(zip(*cells, strict=True)):
        shaped = [
            [f" {line} " for line in wrap(text, w - PADDING, pad=True)]
            for text, w in zip(row, widths, strict=True)
        ]
        height = max(len(lines) for lines in shaped)
        blank = [" " * w for w in widths]
        if index == 0:  # the header row sits at the bottom of its height
            shaped = [[blank[k]] * (height - len(lines)) + lines for k, lines in enumerate(shaped)]
        else:
            shaped = [lines + [blank[k]] * (height - len(lines)) for k, lines in enumerate(shaped)]
        edge = HEAD if index == 0 else BODY
        out += [edge + edge.join(lines[n] for lines in shaped) + edge for n in range(height)]
        if index == 0:
            out.append(_rule(UNDER, widths))
    out.append(_rule(BOTTOM, widths))
    return "".join(line + "\n" for line in out)


def line(text: str) -> str | None:
    """What ``Console().print(Text(text))`` prints, or None when this module cannot say."""
    width = console_width()
    if width is None or not plain(text):
        return None
    return "".join(piece + "\n" for piece in wrap(text, width, pad=False))


def _rule(parts: tuple[str, str, str, str], widths: list[int]) -> str:
    left, across, cross, right = parts
    return left + cross.join(across * w for w in widths) + right
