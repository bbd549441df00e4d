"""The calendar days a search query names ("on May 2nd", "8 May 2023", "2023-05-08").

Why: a question about a day ("What did I tell you on May 4th?") means the memories saved on
that day, yet neither ranker can see a memory's date: BM25 matches the words "May" and "4th"
(or the modal verb "may" anywhere) and the embedding barely moves. ``days_named`` finds the
days so the first stage can lift the candidates saved on one of them (``fusion.dated``).

Only explicit days count: a month name with a day number, either order, an optional ordinal
suffix, "of" and a year ("May 2nd", "2 May", "the 2nd of May, 2023"), and ISO dates
(``2023-05-02``). A month alone, a weekday or "yesterday" name no single day and are left to
the rankers. An impossible day (February 30th) is no day. A year is kept when given; without
one, the day matches in any year.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

MAX_DAYS = 8  # a query naming more days than this is a list, not a question about a day

_MONTHS = {
    name: n
    for n, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(?P<month{n}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day{n}>\d{{1,2}})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year{n}>\d{{4}}))?"
_PATTERN = re.compile(
    r"\b(?:"
    + (_MONTH + r"\s+" + _DAY + _YEAR).format(n=1)
    + r"|"
    + (_DAY + r"\s+(?:of\s+)?" + _MONTH + _YEAR).format(n=2)
    + r"|(?P<iso>(?P<year3>\d{4})-(?P<month3>\d{1,2})-(?P<day3>\d{1,2}))"
    + r")\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Day:
    """A day a query names; ``year`` None matches that month and day in any year."""

    month: int
    day: int
    year: int | None = None

    def holds(self, moment: datetime | date) -> bool:
        return (
            moment.month == self.month
            and moment.day == self.day
            and (self.year is None or moment.year == self.year)
        )


def _valid(year: int | None, month: int, day: int) -> bool:
    try:
        date(year or 2000, month, day)  # 2000 is a leap year: February 29th stays a day
    except ValueError:
        return False
    return True


def days_named(query: str) -> list[Day]:
    """Every explicit day in ``query``, in order, without repeats (at most ``MAX_DAYS``)."""
    found: list[Day] = []
    for match in _PATTERN.finditer(query):
        parts = match.groupdict()
        for n in (1, 2, 3):
            if parts.get(f"day{n}") is None:
                continue
            raw = str(parts[f"month{n}"])
            month = int(raw) if raw.isdigit() else _MONTHS[raw.lower().rstrip(".")]
            day = int(str(parts[f"day{n}"]))
            year_text = parts.get(f"year{n}")
            year = int(year_text) if year_text else None
            if _valid(year, month, day):
                named = Day(month, day, year)
                if named not in found:
                    found.append(named)
            break
    return found[:MAX_DAYS]
