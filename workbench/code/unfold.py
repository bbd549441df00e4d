"""One symbol's full source (``smart_unfold``), or the symbols there are when it is missing.

As claude-mem's ``unfoldSymbol``: the range starts above the symbol at the comment block and
decorators that belong to it, and comes back under a ``// 📍 path Lx-y`` line (``<!-- -->``
for Markdown, whose section runs to the next heading of its level or higher). Leading
blank lines are left out (the original kept the ones between a comment and the code
above). A symbol is found by name or by the qualified name search prints
(``Class.method``); with several of one name, the first in the file, as there.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.code.fold import line_range
from workbench.code.symbols import ParsedFile, Symbol, comment_starts

MAX_LISTED = 200  # symbols listed when the one asked for is missing


@dataclass(frozen=True)
class Unfolded:
    text: str
    symbol: Symbol
    qualified_name: str
    line_start: int
    line_end: int


def find(parsed: ParsedFile, name: str) -> tuple[Symbol, str] | None:
    """The symbol called ``name`` (or qualified so) and its qualified name; first one wins."""
    wanted = name.strip()
    by_name: tuple[Symbol, str] | None = None
    for symbol, parent, _ in parsed.walk():
        qualified = f"{parent}.{symbol.name}" if parent else symbol.name
        if qualified == wanted:
            return symbol, qualified
        if by_name is None and symbol.name == wanted:
            by_name = (symbol, qualified)
    return by_name


def unfold(parsed: ParsedFile, lines: list[str], name: str) -> Unfolded | None:
    """The source of ``name`` in ``parsed`` (whose text is ``lines``), or None."""
    found = find(parsed, name)
    if found is None:
        return None
    symbol, qualified = found
    start, end = symbol.line_start - 1, min(symbol.line_end, len(lines)) - 1
    if parsed.language != "markdown":
        starts = comment_starts(parsed.language)
        while start > 0:
            above = lines[start - 1].strip()
            if above and not above.startswith(starts):
                break
            start -= 1
    while start < symbol.line_start - 1 and not lines[start].strip():
        start += 1
    while end > start and not lines[end].strip():
        end -= 1
    body = "\n".join(line.rstrip("\r") for line in lines[start : end + 1])
    where = f"{parsed.path} L{start + 1}-{end + 1}"
    marker = f"<!-- 📍 {where} -->" if parsed.language == "markdown" else f"// 📍 {where}"
    return Unfolded(f"{marker}\n{body}", symbol, qualified, start + 1, end + 1)


def available(parsed: ParsedFile) -> list[str]:
    """One line per symbol, ``  - name (kind, Lx-y)``, qualified, at most ``MAX_LISTED``."""
    listed = []
    for symbol, parent, _ in parsed.walk():
        qualified = f"{parent}.{symbol.name}" if parent else symbol.name
        listed.append(f"  - {qualified} ({symbol.kind}, {line_range(symbol)})")
    if len(listed) > MAX_LISTED:
        listed = [*listed[:MAX_LISTED], f"  ... +{len(listed) - MAX_LISTED} more"]
    return listed


def not_found_text(parsed: ParsedFile, name: str, shown: str) -> str:
    """The original's answer to a missing symbol: the symbols there are, or why there are none."""
    listed = available(parsed)
    if listed:
        return f'Symbol "{name}" not found in {shown}.\n\nAvailable symbols:\n' + "\n".join(listed)
    if not parsed.has_grammar:
        return f"Could not parse {shown}: {no_grammar(parsed.language)}"
    return f"Could not parse {shown}. File may be unsupported or empty."


def no_grammar(language: str) -> str:
    from workbench.code.languages import SUPPORTED

    return (
        f"no grammar for its language ({language}); code navigation reads "
        f"{', '.join(SUPPORTED)}. Read the file instead."
    )
