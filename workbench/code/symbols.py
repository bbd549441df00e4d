"""A file's symbols from its tree-sitter tree: name, kind, signature, doc, line range.

``parse(text, path)`` is claude-mem's ``parseFile`` (``smart-file-read/parser.ts``) in
process: the language's query (``queries``) finds the symbols, the signature is the code
before the body, the doc is the comment block above (or a Python docstring), and what lies
inside a container (class, struct, impl, trait, interface) becomes its child, a function
there a method. Differences on purpose:

- the signature ends where the node's ``body`` starts (the original cut at the first ``{``
  within ten lines, which split Python signatures and default arguments holding braces);
- nesting is found with one stack over byte ranges, not by comparing every pair, and
  walked without recursion: a hostile file of 10,000 nested classes costs linear time and
  no ``RecursionError``;
- a Markdown section's range runs to the next heading of the same or a higher level, so
  search and unfold see the whole section (the original worked it out only when unfolding).

Lines are 1-based here and in every output.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.code.languages import grammar, language_of
from workbench.code.queries import CONTAINERS, KINDS, QUERIES

if TYPE_CHECKING:
    from tree_sitter import Node, Query

SIGNATURE_CHARS = 200
DOC_LINES = 40  # a comment block above a symbol, looked back at most this far
_WS = re.compile(r"\s+")
_HEADING = re.compile(r"^(#{1,6})\s")
COMMENT_STARTS = ("/**", "*", "*/", "//", "#", "@")
C_COMMENT_STARTS = ("/**", "/*", "*", "*/", "//")  # in C, ``#`` starts a preprocessor line


def comment_starts(language: str) -> tuple[str, ...]:
    """How a comment (or a decorator, which belongs to the symbol below) line starts."""
    return C_COMMENT_STARTS if language in ("c", "cpp") else COMMENT_STARTS


@dataclass
class Symbol:
    """One symbol; ``children`` holds a container's members."""

    name: str
    kind: str
    signature: str
    line_start: int
    line_end: int
    exported: bool
    doc: str | None = None
    level: int = 0  # a Markdown heading's level (1-6)
    children: list[Symbol] = field(default_factory=list)
    start_byte: int = 0
    end_byte: int = 0

    def as_dict(self, parent: str | None = None) -> dict[str, object]:
        return {
            "name": self.name,
            "qualified_name": f"{parent}.{self.name}" if parent else self.name,
            "kind": self.kind,
            "signature": self.signature,
            "doc": first_doc_line(self.doc),
            "line_start": self.line_start,
            "line_end": self.line_end,
            "exported": self.exported,
        }


@dataclass
class ParsedFile:
    """A file's outline: top-level symbols (members nested), imports, size."""

    path: str
    language: str
    symbols: list[Symbol]
    imports: list[str]
    total_lines: int
    has_grammar: bool = True
    error_nodes: bool = False  # the tree holds syntax errors (truncated or hostile source)

    def walk(self) -> Iterator[tuple[Symbol, str | None, int]]:
        """Every symbol with its parent's qualified name and its depth, in file order."""
        stack: list[tuple[Symbol, str | None, int]] = [(s, None, 0) for s in reversed(self.symbols)]
        while stack:
            symbol, parent, depth = stack.pop()
            yield symbol, parent, depth
            qualified = f"{parent}.{symbol.name}" if parent else symbol.name
            stack.extend((c, qualified, depth + 1) for c in reversed(symbol.children))

    def count(self) -> int:
        return sum(1 for _ in self.walk())


_queries: dict[str, Query] = {}


def query_for(language: str) -> Query | None:
    from tree_sitter import Query

    lang = grammar(language)
    if lang is None:
        return None
    if language not in _queries:
        _queries[language] = Query(lang, QUERIES[language])
    return _queries[language]


def parse(text: str, path: str) -> ParsedFile:
    """The outline of ``text``, a file named ``path`` (its extension picks the grammar)."""
    from tree_sitter import Parser, QueryCursor

    language = language_of(path)
    lines = text.split("\n")
    query = query_for(language)
    if query is None:
        return ParsedFile(path, language, [], [], len(lines), has_grammar=False)
    lang = grammar(language)
    assert lang is not None  # query_for found it
    data = text.encode("utf-8", errors="surrogatepass")
    tree = Parser(lang).parse(data)
    matches = QueryCursor(query).matches(tree.root_node)
    symbols, imports = _build(matches, data, lines, language)
    return ParsedFile(
        path, language, symbols, imports, len(lines), error_nodes=tree.root_node.has_error
    )


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _last_row(node: Node) -> int:
    """The node's last line, 0-based: a node ending in a newline ends on the line before."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


def _build(
    matches: list[tuple[int, dict[str, list[Node]]]],
    data: bytes,
    lines: list[str],
    language: str,
) -> tuple[list[Symbol], list[str]]:
    imports: list[str] = []
    exports: list[tuple[int, int]] = []
    found: dict[tuple[int, int, str], Symbol] = {}
    for _, captures in matches:
        for node in captures.get("imp", []):
            imports.append(_WS.sub(" ", _text(node)).strip()[:SIGNATURE_CHARS])
        for node in captures.get("exp", []):
            exports.append((node.start_byte, node.end_byte))
        kind_node, kind = _kind_capture(captures)
        if kind_node is None:
            continue
        names = captures.get("name", [])
        name = _WS.sub(" ", _text(names[0])).strip() if names else ""
        key = (kind_node.start_byte, kind_node.end_byte, kind)
        if key in found and (not name or found[key].name != "anonymous"):
            continue  # the same node by two patterns: keep the named one
        found[key] = _symbol(kind_node, kind, name or "anonymous", data, lines, language)
    symbols = sorted(found.values(), key=lambda s: (s.start_byte, -s.end_byte))
    for symbol in symbols:
        symbol.exported = _exported(symbol, exports, lines, language)
    if language == "markdown":
        _section_ends(symbols, len(lines))
        return symbols, imports
    return _nest(symbols), imports


def _kind_capture(captures: dict[str, list[Node]]) -> tuple[Node | None, str]:
    for capture, nodes in captures.items():
        if capture in KINDS and nodes:
            return nodes[0], KINDS[capture]
    return None, ""


def _symbol(
    node: Node, kind: str, name: str, data: bytes, lines: list[str], language: str
) -> Symbol:
    start, end = node.start_point[0], _last_row(node)
    level = 0
    if language == "markdown":
        first_line = lines[start] if start < len(lines) else ""
        signature, level = _markdown_signature(kind, name, first_line)
        if node.type == "setext_heading":  # underlined: ``===`` is level 1, ``---`` level 2
            level = 2 if any(c.type == "setext_h2_underline" for c in node.children) else 1
            signature = f"{'#' * level} {name}"
        doc = None
    else:
        signature = _signature(node, data)
        doc = _comment_above(lines, start, comment_starts(language))
        if language == "python":
            doc = _python_docstring(node) or doc
    return Symbol(
        name=name,
        kind=kind,
        signature=signature,
        line_start=start + 1,
        line_end=max(end, start) + 1,
        exported=False,
        doc=doc,
        level=level,
        start_byte=node.start_byte,
        end_byte=node.end_byte,
    )


def _signature(node: Node, data: bytes) -> str:
    """The code before the body, on one line; without a body, the node's first line."""
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        # Up to the last token before the body that is not a comment: a comment between
        # ``def f():`` and its first statement is not part of the signature.
        end = node.start_byte
        for child in node.children:
            if child.start_byte >= body.start_byte:
                break
            if "comment" not in child.type:
                end = child.end_byte
        head = data[node.start_byte : end]
    else:
        head = data[node.start_byte : node.end_byte].split(b"\n", 1)[0]
    sig = _WS.sub(" ", head.decode("utf-8", errors="replace")).strip()
    sig = re.sub(r"\s*[{:]\s*$", "", sig).strip()
    if len(sig) > SIGNATURE_CHARS:
        sig = sig[: SIGNATURE_CHARS - 3] + "..."
    return sig


def _markdown_signature(kind: str, name: str, first_line: str) -> tuple[str, int]:
    if kind == "section":
        match = _HEADING.match(first_line.lstrip())
        level = len(match.group(1)) if match else 1  # a setext heading: = is 1, - is 2
        return f"{'#' * level} {name}", level
    if kind == "code":
        return "```" + (name if name != "anonymous" else ""), 0
    if kind == "metadata":
        return "---frontmatter---", 0
    return first_line.strip()[:SIGNATURE_CHARS] or name, 0


def _comment_above(lines: list[str], start: int, starts: tuple[str, ...]) -> str | None:
    """The comment block just above line ``start`` (0-based), blank lines allowed before it."""
    block: list[str] = []
    for i in range(start - 1, max(start - 1 - DOC_LINES, -1), -1):
        stripped = lines[i].strip()
        if not stripped:
            if block:
                break
            continue
        if not stripped.startswith(starts):
            break
        block.append(lines[i])
    return "\n".join(reversed(block)).strip() or None


def _python_docstring(node: Node) -> str | None:
    body = node.child_by_field_name("body")
    if body is None or body.named_child_count == 0:
        return None
    first = body.named_children[0]
    if first.type == "expression_statement" and first.named_child_count:
        string = first.named_children[0]
        if string.type == "string":
            return _text(string).strip()
    return None


def first_doc_line(doc: str | None) -> str | None:
    """The first line of a doc comment or docstring that says something."""
    if not doc:
        return None
    for line in doc.split("\n"):
        cleaned = re.sub(r"^[\s*/#;-]+", "", line)
        cleaned = re.sub(r"^(['\"`]{3}|[rRbBuUfF]{1,2}['\"]{3})", "", cleaned)
        cleaned = re.sub(r"['\"`]{3}\s*$", "", cleaned).strip()
        if cleaned and not cleaned.startswith(("/**", "@")):  # decorators, @param tags
            return cleaned[:SIGNATURE_CHARS]
    return None


def _exported(
    symbol: Symbol, exports: list[tuple[int, int]], lines: list[str], language: str
) -> bool:
    """The original's rule per language: export statements, ``_`` names, capitals, ``pub``."""
    if language in ("javascript", "typescript", "tsx"):
        return any(s <= symbol.start_byte and symbol.end_byte <= e for s, e in exports)
    if language == "python":
        return not symbol.name.startswith("_")
    if language == "go":
        first = symbol.name[:1]
        return first.isupper()
    if language == "rust":
        line = lines[symbol.line_start - 1] if symbol.line_start <= len(lines) else ""
        return line.lstrip().startswith("pub")
    return True


def _nest(symbols: list[Symbol]) -> list[Symbol]:
    """Members into their containers (one stack over byte ranges); the top level back."""
    top: list[Symbol] = []
    open_containers: list[Symbol] = []
    for symbol in symbols:
        while open_containers and symbol.start_byte >= open_containers[-1].end_byte:
            open_containers.pop()
        if open_containers and symbol.end_byte <= open_containers[-1].end_byte:
            if symbol.kind == "function":
                symbol.kind = "method"
            open_containers[-1].children.append(symbol)
        else:
            top.append(symbol)
        if symbol.kind in CONTAINERS:
            open_containers.append(symbol)
    return top


def _section_ends(symbols: list[Symbol], total_lines: int) -> None:
    """A heading's section runs to the line before the next heading of its level or higher."""
    headings = [s for s in symbols if s.kind == "section"]
    open_sections: list[Symbol] = []
    for heading in headings:
        while open_sections and open_sections[-1].level >= heading.level:
            open_sections.pop().line_end = max(heading.line_start - 1, 1)
        open_sections.append(heading)
    for heading in open_sections:
        heading.line_end = total_lines
