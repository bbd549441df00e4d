"""The words only a forgotten observation held, and their copies in the store's own records.

Why words: a summary is its own record, written from the same session as the observation, and
it may quote what the observation said (a key, a hostname, a customer's name). Forgetting the
observation must take those quotes too, without deleting the rest of the summary. What counts
as the observation's own words, so the rule is predictable:

- a token of its title, subtitle, narrative, facts or concepts (letters and digits, with
  inner ``. - _`` kept: ``sk-live-4f2a``, ``billing.internal``), at least ``MIN_LENGTH``
  characters long and not a stop word;
- that no live observation of the same project contains (case-insensitive, as a substring:
  ``rotate`` in another's ``rotated`` keeps it). A word the rest of the memory also uses is
  vocabulary, not this observation's content.

``scrub_summaries`` replaces every whole-word occurrence (any case) in the summaries of the
observation's session by ``REPLACEMENT``; the update fires the summaries' FTS and
``updated_at_epoch`` triggers, so search forgets them and the next publish supersedes the
team copy. A rewritten summary's source event is scrubbed too (``events.scrub``) when its
payload holds a word: recompress can then never write the old text again. ``prompts_holding``
finds the user's own prompts that still hold a word: those are kept as typed, and the forget
report names them.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from workbench.recall.fts import STOPWORDS
from workbench.store import events
from workbench.store.connection import atomic
from workbench.store.summaries import JSON_FIELDS, TEXT_FIELDS

MIN_LENGTH = 6
REPLACEMENT = "[forgotten]"
TOKEN = re.compile(r"[^\W_](?:[\w.\-]*[^\W_])?")
OBSERVATION_TEXT = (
    "lower(title || ' ' || subtitle || ' ' || narrative || ' ' || facts || ' ' || concepts)"
)


@dataclass(frozen=True)
class ForgottenText:
    """What an observation said, read before it is deleted."""

    id: int
    project: str
    content_session_id: str | None
    text: str


@dataclass
class SummaryScrub:
    summary_ids: list[int] = field(default_factory=list)
    event_ids: list[int] = field(default_factory=list)
    event_keys: list[str] = field(default_factory=list)


def read_text(conn: sqlite3.Connection, observation_id: int) -> ForgottenText | None:
    """The observation's words (None when there is no such row)."""
    row = conn.execute(
        f"SELECT id, project, content_session_id, {OBSERVATION_TEXT} AS text"
        " FROM observations WHERE id = ?",
        (observation_id,),
    ).fetchone()
    if row is None:
        return None
    return ForgottenText(
        int(row["id"]), str(row["project"]), row["content_session_id"], str(row["text"])
    )


def distinctive_words(conn: sqlite3.Connection, forgotten: ForgottenText) -> list[str]:
    """The forgotten observation's own words (module docstring), longest first.

    Call after the deletion: the observation itself no longer counts as "another" one.
    """
    wanted = {
        token
        for token in TOKEN.findall(forgotten.text)
        if len(token) >= MIN_LENGTH and token not in STOPWORDS
    }
    rows = conn.execute(
        f"SELECT {OBSERVATION_TEXT} FROM observations WHERE project = ?", (forgotten.project,)
    )
    for (other,) in rows:
        if not wanted:
            break
        wanted = {w for w in wanted if w not in other}
    return sorted(wanted, key=lambda w: (-len(w), w))


def pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """One regex matching any of ``words`` as a whole word, any case (None for no words)."""
    alternatives = sorted(set(words), key=lambda w: (-len(w), w))
    if not alternatives:
        return None
    joined = "|".join(re.escape(w) for w in alternatives)
    return re.compile(rf"(?<![\w])(?:{joined})(?![\w])", re.IGNORECASE)


def redact(text: str, words: re.Pattern[str] | None) -> str:
    return text if words is None else words.sub(REPLACEMENT, text)


def scrub_summaries(
    conn: sqlite3.Connection, content_session_id: str, words: list[str]
) -> SummaryScrub:
    """Replace ``words`` in the session's summaries; scrub the source events that held them."""
    found = SummaryScrub()
    regex = pattern(words)
    if regex is None:
        return found
    columns = (*TEXT_FIELDS, *JSON_FIELDS)
    with atomic(conn):
        rows = conn.execute(
            f"SELECT id, event_id, {', '.join(columns)} FROM session_summaries"
            " WHERE content_session_id = ?",
            (content_session_id,),
        ).fetchall()
        for row in rows:
            new = {c: _redact_column(row[c], c in JSON_FIELDS, regex) for c in columns}
            if all(new[c] == row[c] for c in columns):
                continue
            sets = ", ".join(f"{c} = ?" for c in columns)
            conn.execute(
                f"UPDATE session_summaries SET {sets} WHERE id = ?",
                (*(new[c] for c in columns), row["id"]),
            )
            found.summary_ids.append(int(row["id"]))
            if row["event_id"] is not None and _event_holds(conn, int(row["event_id"]), regex):
                scrub = events.scrub(conn, int(row["event_id"]), observation_ids=[])
                if scrub is not None and not scrub.already:
                    found.event_ids.append(scrub.event_id)
                if scrub is not None and scrub.event_key:
                    found.event_keys.append(scrub.event_key)
    return found


def prompts_holding(
    conn: sqlite3.Connection, content_session_id: str | None, words: list[str]
) -> list[int]:
    """Ids of the session's user prompts that still contain any of ``words``."""
    regex = pattern(words)
    if regex is None or content_session_id is None:
        return []
    rows = conn.execute(
        "SELECT id, prompt_text FROM user_prompts WHERE content_session_id = ? ORDER BY id",
        (content_session_id,),
    )
    return [int(r[0]) for r in rows if regex.search(str(r[1] or ""))]


def _redact_column(value: object, is_json: bool, regex: re.Pattern[str]) -> object:
    if not isinstance(value, str):
        return value
    if not is_json:
        return redact(value, regex)
    try:
        items = json.loads(value)
    except ValueError:
        return redact(value, regex)
    if not isinstance(items, list):
        return value
    cleaned = [redact(i, regex) if isinstance(i, str) else i for i in items]
    return json.dumps(cleaned, ensure_ascii=False) if cleaned != items else value


def _event_holds(conn: sqlite3.Connection, event_id: int, regex: re.Pattern[str]) -> bool:
    row = conn.execute("SELECT payload FROM events WHERE id = ?", (event_id,)).fetchone()
    return row is not None and regex.search(str(row[0])) is not None
