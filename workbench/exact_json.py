"""JSON read and written back with every number spelled as the user wrote it.

Python's ``json`` turns ``1e400`` into ``inf`` and writes it back as ``Infinity``, which is not
JSON (the agent then cannot read its own settings), and rewrites ``1.0E+2`` as ``100.0``,
``-0`` as ``0``; an integer past 4300 digits does not even parse. In a file that is the
user's, a number we did not write must come back byte for byte: ``loads`` keeps any number
whose Python value would not print the same (and ``NaN``/``Infinity``, which some editors
accept) as a ``Number`` holding its text, and ``dumps`` writes that text verbatim. Other
numbers stay ``int``/``float``, so the merge code compares and builds values as before.

``dumps`` writes what ``json.dumps(value, indent=2)`` writes for everything else.
"""

from __future__ import annotations

import json
import math
from typing import Any


class Number:
    """A number token kept as written (``1e400``, ``1.0E+2``, ``-0``, a 5000-digit integer)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Number) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Number({self.text!r})"


def _int(text: str) -> int | Number:
    try:
        value = int(text)
    except ValueError:  # past Python's digit limit for int(str)
        return Number(text)
    return value if str(value) == text else Number(text)


def _float(text: str) -> float | Number:
    value = float(text)
    return value if math.isfinite(value) and repr(value) == text else Number(text)


def loads(text: str) -> Any:
    """``json.loads`` keeping the spelling of every number it would change."""
    return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=Number)


def dumps(value: Any, indent: int = 2) -> str:
    """``json.dumps(value, indent=indent)``, with each ``Number`` as its own text."""
    out: list[str] = []
    _write(value, 0, indent, out)
    return "".join(out)


def _write(value: Any, level: int, indent: int, out: list[str]) -> None:
    if isinstance(value, Number):
        out.append(value.text)
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        pad = "\n" + " " * (indent * (level + 1))
        out.append("{")
        for n, (key, item) in enumerate(value.items()):
            out.append(("," if n else "") + pad + json.dumps(str(key)) + ": ")
            _write(item, level + 1, indent, out)
        out.append("\n" + " " * (indent * level) + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        pad = "\n" + " " * (indent * (level + 1))
        out.append("[")
        for n, item in enumerate(value):
            out.append(("," if n else "") + pad)
            _write(item, level + 1, indent, out)
        out.append("\n" + " " * (indent * level) + "]")
    else:
        out.append(json.dumps(value))
