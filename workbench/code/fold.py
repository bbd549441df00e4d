"""What the agent reads: folded views, search results and unfolded symbols, as text.

The shapes are claude-mem's (``formatFoldedView``, ``formatSearchResults``, ``unfoldSymbol``)
so an agent used to the original reads the same thing: a ``📁 path (language, N lines)``
header, imports, then one entry per symbol with its icon, name, ``[exported]``, line range,
signature and the first line of its doc, members indented under their container. Added:
the folded view's token estimate in its header (``~N tokens folded``), which search
results repeat per file, and a word when the file has syntax errors. Indentation stops
growing past ``MAX_INDENT`` levels, so a hostile nesting cannot blow up the output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.code.queries import ICONS
from workbench.code.symbols import ParsedFile, Symbol, first_doc_line

MAX_IMPORTS_SHOWN = 10
MAX_INDENT = 12
MARKDOWN_COLUMN = 56


def estimate_tokens(*texts: str) -> int:
    """``ceil(chars / 4)``: ``workbench.tokens``'s rule, restated so this package stays
    below ``recall`` (whose file history imports ``code.languages``)."""
    return math.ceil(sum(len(t) for t in texts) / 4)


def line_range(symbol: Symbol) -> str:
    if symbol.line_start == symbol.line_end:
        return f"L{symbol.line_start}"
    return f"L{symbol.line_start}-{symbol.line_end}"


def folded_body(parsed: ParsedFile) -> list[str]:
    """The view's lines below its header."""
    if parsed.language == "markdown":
        return _markdown_body(parsed)
    parts: list[str] = []
    if parsed.imports:
        parts.append(f"  📦 Imports: {len(parsed.imports)} statements")
        parts.extend(f"    {imp}" for imp in parsed.imports[:MAX_IMPORTS_SHOWN])
        if len(parsed.imports) > MAX_IMPORTS_SHOWN:
            parts.append(f"    ... +{len(parsed.imports) - MAX_IMPORTS_SHOWN} more")
        parts.append("")
    for symbol, _, depth in parsed.walk():
        indent = "  " * (min(depth, MAX_INDENT) + 1)
        exported = " [exported]" if symbol.exported else ""
        icon = ICONS.get(symbol.kind, "·")
        parts.append(f"{indent}{icon} {symbol.name}{exported} ({line_range(symbol)})")
        parts.append(f"{indent}  {symbol.signature}")
        doc = first_doc_line(symbol.doc)
        if doc:
            parts.append(f"{indent}  💬 {doc}")
    return parts


def _markdown_body(parsed: ParsedFile) -> list[str]:
    parts: list[str] = []
    level = 0
    for symbol, _, _ in parsed.walk():
        if symbol.kind == "section":
            level = symbol.level
            content = f"{'  ' * symbol.level}{symbol.signature}"
            where = f"L{symbol.line_start}"
        elif symbol.kind == "reference":
            content = f"{'  ' * (level + 1)}↗ {symbol.name}"
            where = f"L{symbol.line_start}"
        elif symbol.kind == "metadata":
            content, where = f"  {symbol.signature}", line_range(symbol)
        else:
            content, where = f"{'  ' * (level + 1)}{symbol.signature}", line_range(symbol)
        parts.append(f"{content.ljust(MARKDOWN_COLUMN)}{where}")
    return parts


@dataclass(frozen=True)
class Folded:
    """A folded view and what reading it costs."""

    text: str
    tokens: int


def folded_view(parsed: ParsedFile) -> Folded:
    """The whole view: header (with its token estimate) and body."""
    body = folded_body(parsed)
    icon = "📄" if parsed.language == "markdown" else "📁"
    notes = ", syntax errors: partial outline" if parsed.error_nodes else ""
    head = f"{icon} {parsed.path} ({parsed.language}, {parsed.total_lines} lines{notes}"
    tokens = estimate_tokens(head, *body) + 6  # the header's token figure itself
    lines = [f"{head}, ~{tokens} tokens folded)"]
    if parsed.language != "markdown":
        lines.append("")
    lines.extend(body)
    return Folded(text="\n".join(lines), tokens=tokens)
