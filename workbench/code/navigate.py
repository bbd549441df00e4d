"""The three code tools as functions: ``outline``, ``unfold``, ``search``; MCP and CLI call these.

Each takes the project root (already checked, ``paths.project_root``) and the path as
given, resolves it inside the root (``paths.inside``), reads it safely (``source``) and
parses it once (``cache``). Each returns a result with the text the agent reads (the
original's shapes, ``fold``) and a JSON form for ``--json``.

Errors are ``WorkbenchError``s with a message naming the fix: a path outside the root, a
missing file, a binary or huge file (``source.Skipped``), a folder where a file is
needed. A missing symbol is not an error: its answer lists the symbols there are, as the
original's does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.code import cache, paths
from workbench.code.fold import folded_view
from workbench.code.search import Found, Match, match_file, query_parts, ranked
from workbench.code.source import MAX_FILE_BYTES, Skipped, is_minified, read_source
from workbench.code.symbols import ParsedFile, parse
from workbench.code.unfold import not_found_text
from workbench.code.unfold import unfold as unfold_symbol
from workbench.code.walk import MAX_FILES, source_files
from workbench.errors import InvalidInput

MAX_QUERY_CHARS = 500
MAX_RESULTS = 200


@dataclass(frozen=True)
class Outline:
    path: str
    parsed: ParsedFile
    text: str
    tokens: int
    encoding: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "language": self.parsed.language,
            "total_lines": self.parsed.total_lines,
            "encoding": self.encoding,
            "syntax_errors": self.parsed.error_nodes,
            "folded_tokens": self.tokens,
            "imports": self.parsed.imports,
            "symbols": [
                {**s.as_dict(parent), "depth": depth} for s, parent, depth in self.parsed.walk()
            ],
        }


@dataclass(frozen=True)
class Unfolded:
    path: str
    symbol: str
    found: bool
    text: str
    line_start: int | None = None
    line_end: int | None = None
    kind: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "symbol": self.symbol,
            "found": self.found,
            "kind": self.kind,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "text": self.text,
        }


@dataclass
class SearchResult:
    query: str
    matches: list[Match]
    files: list[tuple[ParsedFile, int, str]]  # parsed, folded tokens, folded text
    files_scanned: int
    symbols_found: int
    skipped: list[str] = field(default_factory=list)
    truncated: bool = False

    @property
    def tokens(self) -> int:
        return sum(tokens for _, tokens, _ in self.files)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "files_scanned": self.files_scanned,
            "symbols_found": self.symbols_found,
            "matches": [m.as_dict() for m in self.matches],
            "files": [
                {
                    "path": p.path,
                    "language": p.language,
                    "total_lines": p.total_lines,
                    "folded_tokens": tokens,
                    "folded": text,
                }
                for p, tokens, text in self.files
            ],
            "folded_tokens": self.tokens,
            "skipped": self.skipped,
            "truncated": self.truncated,
        }


def _parsed(root: Path, path: Path) -> tuple[ParsedFile, str, list[str]]:
    """The file parsed (from the cache when unchanged), its encoding and its lines."""
    shown = paths.shown(root, path)
    if path.is_dir():
        raise InvalidInput(f"{shown} is a folder; pass a source file (or use search on a folder)")
    source = read_source(path, shown)
    return parse(source.text, shown), source.encoding, source.lines


def outline(root: Path, given: str, base: Path | None = None) -> Outline:
    """``smart_outline``: the file's symbols with bodies folded."""
    path = paths.inside(root, given, base)
    parsed, encoding, _ = _parsed(root, path)
    folded = folded_view(parsed)
    return Outline(parsed.path, parsed, folded.text, folded.tokens, encoding)


def outline_text(result: Outline) -> str:
    """What the agent reads; the original's words when there is nothing to outline."""
    if result.parsed.symbols:
        return result.text
    if not result.parsed.has_grammar:
        from workbench.code.unfold import no_grammar

        return f"Could not outline {result.path}: {no_grammar(result.parsed.language)}"
    return f"No symbols in {result.path} ({result.parsed.language}): it may be empty. {result.text}"


def unfold(root: Path, given: str, symbol: str, base: Path | None = None) -> Unfolded:
    """``smart_unfold``: the symbol's source, or the symbols there are."""
    if not symbol or not symbol.strip():
        raise InvalidInput("the symbol name is empty; pass a name from smart_outline")
    if len(symbol) > MAX_QUERY_CHARS:
        raise InvalidInput(f"the symbol name is over {MAX_QUERY_CHARS} characters")
    path = paths.inside(root, given, base)
    parsed, _, lines = _parsed(root, path)
    done = unfold_symbol(parsed, lines, symbol)
    if done is None:
        return Unfolded(parsed.path, symbol, False, not_found_text(parsed, symbol, parsed.path))
    return Unfolded(
        parsed.path,
        done.qualified_name,
        True,
        done.text,
        done.line_start,
        done.line_end,
        done.symbol.kind,
    )


def search(
    root: Path,
    query: str,
    given: str | None = None,
    *,
    max_results: int = 20,
    file_pattern: str | None = None,
    base: Path | None = None,
) -> SearchResult:
    """``smart_search``: matching symbols under ``given`` (default the root), best first."""
    parts = query_parts(query or "")
    if not parts:
        raise InvalidInput("the query is empty; pass a symbol name or words of one")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"the query is over {MAX_QUERY_CHARS} characters; shorten it")
    if not 1 <= max_results <= MAX_RESULTS:
        raise InvalidInput(f"max_results must be 1 to {MAX_RESULTS}, not {max_results}")
    start = paths.inside(root, given, base) if given else root
    if start.is_dir():
        walk = source_files(root, start, file_pattern)
        files, truncated = walk.files, walk.truncated
    else:
        files, truncated = [start], False
    found, symbols = Found(), 0
    skipped: list[str] = []
    for path in files:
        parsed = _cached(root, path, skipped)
        if parsed is None:
            continue
        symbols += parsed.count()
        match_file(parsed, query, parts, found)
    best = ranked(found, parts, max_results)
    views = []
    for file_path in dict.fromkeys(m.path for m in best):
        folded = folded_view(found.files[file_path])
        views.append((found.files[file_path], folded.tokens, folded.text))
    return SearchResult(query, best, views, len(files), symbols, skipped, truncated)


def _cached(root: Path, path: Path, skipped: list[str]) -> ParsedFile | None:
    shown = paths.shown(root, path)
    try:
        info = os.stat(path)
    except OSError:
        skipped.append(f"{shown}: vanished while searching")
        return None
    if info.st_size > MAX_FILE_BYTES or info.st_size == 0:
        if info.st_size:
            skipped.append(f"{shown}: over the {MAX_FILE_BYTES:,}-byte limit")
        return None
    entry = cache.key(path, info.st_size, info.st_mtime_ns, shown)
    parsed = cache.get(entry)
    if parsed is None:
        try:
            text = read_source(path, shown).text
        except Skipped as exc:
            skipped.append(exc.message)
            return None
        # Trigger: a bundle (``dist/app.min.js``, a vendored ``.cjs``) outside the skipped
        # folders. Why: its symbols are mangled, and parsing it costs as much as hundreds of
        # source files. Outcome: left out of a search, said so; an outline still reads it.
        if is_minified(text):
            skipped.append(f"{shown}: minified or generated (very long lines)")
            return None
        parsed = parse(text, shown)
        cache.put(entry, parsed)
    return parsed


def search_text(result: SearchResult) -> str:
    """The original's ``formatSearchResults`` shape, with each folded view's token figure."""
    from workbench.code.symbols import first_doc_line

    parts = [
        f'🔍 Smart Search: "{result.query}"',
        f"   Scanned {result.files_scanned} files, found {result.symbols_found} symbols",
        f"   {len(result.matches)} matches across {len(result.files)} files "
        f"(~{result.tokens} tokens for folded view)",
    ]
    if result.truncated:
        parts.append(f"   Stopped after {MAX_FILES:,} files: pass a path to narrow the search")
    if result.skipped:
        parts.append(f"   Skipped {len(result.skipped)} files: " + "; ".join(result.skipped[:5]))
    parts.append("")
    if not result.matches:
        parts.append("   No matching symbols found.")
        return "\n".join(parts)
    parts += ["── Matching Symbols ──", ""]
    for match in result.matches:
        parts.append(
            f"  {match.symbol.kind} {match.qualified_name} "
            f"({match.path}:{match.symbol.line_start}-{match.symbol.line_end})"
        )
        parts.append(f"    {match.symbol.signature}")
        doc = first_doc_line(match.symbol.doc)
        if doc:
            parts.append(f"    💬 {doc}")
        parts.append("")
    parts += ["── Folded File Views ──", ""]
    for _, _, text in result.files:
        parts += [text, ""]
    parts += [
        "── Actions ──",
        "  To see full implementation: use smart_unfold with file path and symbol name",
    ]
    return "\n".join(parts)
