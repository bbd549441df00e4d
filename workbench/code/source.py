"""A source file read safely: size cap, binary check, any encoding, one line model.

What can go wrong with a file an agent names, and what happens:

- not a regular file, unreadable, or larger than ``MAX_FILE_BYTES``: ``Skipped`` with the
  reason (the tools print it; a search counts and names what it skipped);
- binary (a NUL byte in the first 8 KiB once a byte-order mark has been accounted for):
  ``Skipped``; UTF-16/32 text carries NULs, so the BOM is read first;
- any encoding: a BOM decides (UTF-8/16/32), else strict UTF-8, else Latin-1, which maps
  every byte to a character, so no file is unreadable for its encoding. Undecodable
  sequences under a BOM become U+FFFD. The encoding used is kept for the output.

Lines are split on ``\\n`` only, as tree-sitter counts rows: ``str.splitlines`` also splits
on ``\\r``, form feeds and U+2028, which would shift every line number after one.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import WorkbenchError

MAX_FILE_BYTES = 1024 * 1024  # 1 MiB: larger files are generated, vendored or data
BINARY_PROBE = 8192
BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class Skipped(WorkbenchError):
    """A file the code tools will not read; the message says why and what to do instead."""

    code = "FILE_SKIPPED"


@dataclass(frozen=True)
class Source:
    """A file's text, the bytes tree-sitter parses (UTF-8) and its lines."""

    text: str
    encoding: str

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8", errors="surrogatepass")

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


MINIFIED_LINE_CHARS = 500  # mean line length above which a file is minified or generated


def is_minified(text: str) -> bool:
    """Bundled or minified code: long lines on average (a search skips it, see ``navigate``)."""
    if len(text) < 20_000:
        return False
    return len(text) / (text.count("\n") + 1) > MINIFIED_LINE_CHARS


def decode(raw: bytes) -> tuple[str, str]:
    """``raw`` as text and the encoding that read it (never raises)."""
    for bom, encoding in BOMS:
        if raw.startswith(bom):
            return raw[len(bom) :].decode(encoding, errors="replace"), encoding
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def is_binary(raw: bytes) -> bool:
    """A NUL byte near the start, unless a UTF-16/32 byte-order mark explains it."""
    if any(raw.startswith(bom) for bom, enc in BOMS if enc != "utf-8"):
        return False
    return b"\0" in raw[:BINARY_PROBE]


def read_source(path: Path, shown: str, max_bytes: int = MAX_FILE_BYTES) -> Source:
    """The text of ``path`` (named ``shown`` in messages), or ``Skipped`` saying why."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise Skipped(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise Skipped(f"{shown}: not a regular file; pass a source file")
    if info.st_size > max_bytes:
        raise Skipped(
            f"{shown}: {info.st_size:,} bytes is over the {max_bytes:,}-byte limit for code "
            "navigation (generated or data files); read the part you need with a line range"
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise Skipped(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:  # it grew since the stat
        raise Skipped(f"{shown}: over the {max_bytes:,}-byte limit for code navigation")
    if is_binary(raw):
        raise Skipped(f"{shown}: a binary file (NUL bytes); code navigation reads source text")
    text, encoding = decode(raw)
    return Source(text=text, encoding=encoding)
