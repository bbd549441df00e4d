"""Symbol search over a codebase (``smart_search``): claude-mem's ``searchCodebase`` scoring.

The query is split on spaces, ``_ - . /``; each part scores against a symbol's name (10 for
equal, 5 for contained, 1 for its letters in order), times 3; the whole query inside the
signature adds 2 and inside the doc 1. (The original also scored the file's path, then
kept only the files of the matches cut to ``max_results``, so a path alone never showed:
that step is left out.)
Matches are ordered by their qualified name's score (stable, so file order breaks ties), cut
to ``max_results``, and the folded views of the files they are in come with them, each
with its token estimate, so the agent can choose what to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.code.symbols import ParsedFile, Symbol

_SPLIT = re.compile(r"[\s_\-./]+")


def query_parts(query: str) -> list[str]:
    return [p for p in _SPLIT.split(query.lower()) if p]


def match_score(text: str, parts: list[str]) -> int:
    score = 0
    for part in parts:
        if text == part:
            score += 10
        elif part in text:
            score += 5
        else:
            at = 0
            for char in part:
                found = text.find(char, at)
                if found == -1:
                    break
                at = found + 1
            else:
                score += 1
    return score


@dataclass(frozen=True)
class Match:
    """One matching symbol."""

    path: str
    symbol: Symbol
    qualified_name: str
    reason: str
    score: int

    def as_dict(self) -> dict[str, object]:
        parent = self.qualified_name.rpartition(".")[0] or None
        return {"path": self.path, **self.symbol.as_dict(parent), "match": self.reason}


@dataclass
class Found:
    """Every match in the files scanned (before the cut), and the files they are in."""

    matches: list[Match] = field(default_factory=list)
    files: dict[str, ParsedFile] = field(default_factory=dict)


def match_file(parsed: ParsedFile, query: str, parts: list[str], found: Found) -> None:
    """Add ``parsed``'s matching symbols, and the file when any symbol of it matches."""
    lowered = query.lower()
    for symbol, parent, _ in parsed.walk():
        score, reasons = 0, []
        name_score = match_score(symbol.name.lower(), parts)
        if name_score:
            score += name_score * 3
            reasons.append("name")
        if lowered and lowered in symbol.signature.lower():
            score += 2
            reasons.append("signature")
        if lowered and symbol.doc and lowered in symbol.doc.lower():
            score += 1
            reasons.append("doc")
        if score:
            qualified = f"{parent}.{symbol.name}" if parent else symbol.name
            reason = " + ".join(reasons) + " match"
            found.matches.append(Match(parsed.path, symbol, qualified, reason, score))
            found.files[parsed.path] = parsed


def ranked(found: Found, parts: list[str], max_results: int) -> list[Match]:
    """The original's order: by the qualified name's score, best first, then file order."""
    order = sorted(found.matches, key=lambda m: -match_score(m.qualified_name.lower(), parts))
    return order[:max_results]
