"""Stdlib-only: a file of the user's whose lines end in CRLF is written back with CRLF.

Every writer of a user's file builds its text with ``\\n``: the JSON and TOML serialisers,
Goose's YAML joined line by line, a ``CLAUDE.md`` read with Python's universal newlines. A
file whose every line ends in CRLF (edited on Windows, or copied from there) would then have
each of its lines rewritten by an install or a folder-memory run, and uninstall or ``clean``
would not give its bytes back.
"""

from __future__ import annotations


def kept(text: str, current: bytes | None) -> str:
    """``text`` with CRLF line endings when every line of ``current`` (the file now) ends in
    CRLF, else as it is: a new file, an LF file and one that mixes both get what the writer
    made. Every line break of such a file was CRLF, so each one the writer made becomes one
    (a JSON string holds none raw; a TOML or YAML multi-line string read from it had CRLF)."""
    if not current or b"\n" not in current or current.count(b"\n") != current.count(b"\r\n"):
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
