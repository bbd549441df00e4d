"""Code identifiers in the full-text index: ``ReviewBuildWorker`` is found whole and by its parts.

The FTS tables' tokenizer (``porter unicode61``) already cuts at ``_``, ``-``, ``/`` and ``.``,
so ``check_token``, ``payments-api`` and ``src/payments/refund.py`` are indexed as their parts,
and a phrase of those parts (``"check token"``) finds them whole. It cannot cut CamelCase:
``ReviewBuildWorker`` is one token, so "build worker" never found it. FTS5 tokenizers are
written in C and the stdlib ``sqlite3`` module cannot register one, so the *text* is expanded
before it is indexed instead: ``split_identifiers`` writes each CamelCase word's parts right
after it::

    "Bumped cypress for TimelineScheduler"
    -> "Bumped cypress for TimelineScheduler Timeline Scheduler"

The whole stays first, so text to its left stays adjacent to it (a phrase of the original
words still matches), and the parts follow, so "timeline scheduler …" matches too.

Where it runs: the FTS triggers call it as the SQL function ``wb_split_identifiers``
(``SQL_FUNCTION``), which ``store.connection.connect`` registers on every connection; the query side
(``recall.fts``) expands the user's text the same way, so phrases built from a query line up
with the indexed tokens. A connection without the function (the ``sqlite3`` shell) can read
and search the store but cannot write observations, prompts or summaries: the store has one
writer, the service.

Only ASCII case changes are cut (lower→Upper, digit→Upper-lower, and an acronym's end before
a capitalised word, ``XMLHttpRequest`` → ``XML Http Request``); ``IDs``, ``APIs``, ``10GB`` and
``2FA`` stay whole. The output is what the index holds, and the FTS tables are contentless
(``schema.m008``), so rows are deleted from the index by repeating it: **changing this
function's output needs a migration that rebuilds the FTS tables** (``schema.rebuild_fts``).
"""

from __future__ import annotations

import re

SQL_FUNCTION = "wb_split_identifiers"
# What a SQL function receives and returns (``sqlite3`` hands blobs over as ``bytes``).
SQLValue = str | bytes | int | float | None

# A case change to cut at; most text has none, and searching for one is the cheap test. Each
# change starts with a letter or digit followed by a capital; the lookahead says so first, so
# the regex engine tries the three forms only there (~2.5x faster on prose, where every
# position failed all three before; the same matches: tests/test_search_same_ranking.py).
_HUMP = re.compile(r"(?=[a-zA-Z0-9][A-Z])(?:[a-z][A-Z]|[0-9][A-Z][a-z]|[A-Z][A-Z][a-z]{2})")
# A run of letters/digits (the tokenizer's unit) holding at least one such change.
_HUMPED = re.compile(r"(?<![^\W_])[^\W_]*?(?:[a-z][A-Z]|[0-9][A-Z][a-z]|[A-Z][A-Z][a-z]{2})[^\W_]*")
_CUT = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z]{2})")


def parts(word: str) -> list[str]:
    """``word`` cut at its case changes (``["Review", "Build", "Worker"]``); ``[word]`` if none."""
    return [p for p in _CUT.split(word) if p]


def _expand(match: re.Match[str]) -> str:
    word = match.group(0)
    return word + " " + " ".join(parts(word))


def split_identifiers(text: SQLValue) -> SQLValue:
    """``text`` with each CamelCase word followed by its parts; anything else unchanged.

    Total (SQL values may be NULL, numbers or blobs): only ``str`` is expanded.
    """
    if not isinstance(text, str) or not _HUMP.search(text):
        return text
    return _HUMPED.sub(_expand, text)
