"""A relevance set from MemoryBank-SiliconFriend (Zhong et al., AAAI 2024): ``memorybank``.

Source: the public repository github:zhongwanjun/MemoryBank-SiliconFriend (MIT licence: its
LICENSE file, "Copyright (c) 2023 Wanjun Zhong", read at the snapshot used), files
``eval_data/en/memory_bank_en.json`` (per user: ``history`` = ``{"YYYY-MM-DD": [{"query",
"response"}, ...]}``, ten days of chats between a user and an AI companion) and
``eval_data/en/probing_questions_en.jsonl`` (one line per user: ``{name: [question, ...]}``).
The raw files are not in git: copy them to ``/work/data-sets/memorybank/`` (or pass another
directory). Without them the set is skipped with a message naming the path.

Shaped like a user's memory of chats: one memory per utterance (``"<user>: <query>"`` and
``"AI: <response>"``), one project per user, one session per day stored at that day's date
(a minute apart in the order spoken), every question searched with its user's project filter.

Gold evidence: the release gives questions but no answers or evidence, so the gold utterances
below (``GOLD``) were labelled by hand, once, by reading each user's whole history before any
ranker was run on the set: for each question, the utterances that state what the question asks
("what did you recommend" -> the AI's turn that names it; "what did I ..." -> the user's turn
that says it). Where the question names a date, only that day's utterances were considered.
Where the data contradicts the question's premise (Emily's "Green Wheat Park" is "Green Meadow
Park" in the chats; Gary's "twice-cooked pork" is "Spicy Pork Tripe") the turn that answers
the question as asked is gold. One question has no answer in the data (John Zhang's "What
dish did I make on May 5th?": that day holds no chat) and is left out, and a question asked
word for word of two users ("What kind of cuisine do I like?") is kept for the first only, as
in the QMSum sets: 98 questions remain.
A label is ``"<day>.<pair><u|a>"``: day index in the history, pair index in that day, ``u``
the user's query or ``a`` the AI's response.

Classes: ``dated`` when the question names a day ("On May 2nd, ..."; the date lever), else
``undated``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.set_question import SetQuestion

DEFAULT_PATH = Path("/work/data-sets/memorybank")
MEMORIES = "memory_bank_en.json"
QUESTIONS = "probing_questions_en.jsonl"
CLASSES = ("dated", "undated")
ASSISTANT = "AI"
_DATED = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december)\s+\d{1,2}(?:st|nd|rd|th)?\b",
    re.IGNORECASE,
)

# user -> one tuple of gold labels per probing question, in the file's order (None: unanswerable)
GOLD: dict[str, tuple[tuple[str, ...] | None, ...]] = {
    "Emily": (("3.3u",), ("4.0u",), ("6.2a",), ("1.1u",), ("3.1u", "3.2u"), ("5.1u",), ("7.1u",)),
    "Frank": (("0.2u",), ("1.8u",), ("2.1a",), ("8.1u",), ("9.1u",), ("3.1u",), ("1.2a",)),
    "Lucy": (
        ("0.3u",),
        ("2.1u", "2.2u"),
        ("1.1u",),
        ("3.1u",),
        ("6.0a", "3.2a"),
        ("5.1a",),
        ("1.1u",),
    ),
    "Sunny": (("1.1u",), ("0.4u",), ("6.1a",), ("4.1u",), ("0.2u",), ("3.1a",), ("7.0a",)),
    "Jason": (("1.2u",), ("2.3u",), ("1.2u",), ("0.4a",), ("4.1u",), ("5.3u",), ("7.1a",)),
    "Linda": (("9.1u",), ("9.3u",), ("0.2u",), ("1.2a",), ("5.1u",), ("4.1u",), ("7.1u",)),
    "John Zhang": (
        ("1.1u",),
        ("2.0u", "2.1u"),
        ("1.2u",),
        ("3.0u",),
        None,
        ("7.0u",),
        ("9.0u",),
    ),
    "Ivy": (
        ("0.1u", "0.2u"),
        ("9.1u", "9.2u"),
        ("5.0u",),
        ("1.2u",),
        ("0.3u",),
        ("8.0a",),
        ("5.0a",),
    ),
    "Henry": (("0.1u",), ("3.0u",), ("3.1a",), ("7.1a",), ("9.1u",), ("1.2a",), ("5.0a",)),
    "Gary": (("1.2u",), ("7.0a",), ("8.1a",), ("7.1a",), ("5.0u", "5.1u"), ("3.0a",), ("6.0a",)),
    "Jack": (("0.2a",), ("0.2a",), ("8.2u",), ("3.1u",), ("6.1u",), ("5.1a",), ("7.0u",)),
    "Roland": (
        ("3.1a", "3.5a"),
        ("3.2a", "3.6a"),
        ("3.1a", "3.2a", "3.5a", "3.6a"),
        ("5.1u",),
        ("1.1a", "1.2a"),
        ("0.2u",),
    ),
    "Susan": (("0.1u", "0.2u"), ("0.2u",), ("3.1u",), ("2.1u",), ("7.1a",)),
    "Luna": (("1.1u", "1.2u"), ("3.1u", "3.2u"), ("7.0u",), ("6.2a",), ("1.4u",)),
    "Leo": (("0.2u",), ("5.1u",), ("5.2u",), ("6.1a",), ("6.1a",), ("7.1a",), ("9.0u",)),
}


@dataclass(frozen=True)
class Turn:
    user: str
    day: str  # YYYY-MM-DD
    text: str
    created_ms: int


def available(path: Path = DEFAULT_PATH) -> str | None:
    """None when the raw files are there, else why the set is skipped."""
    if not ((path / MEMORIES).is_file() and (path / QUESTIONS).is_file()):
        return (
            f"MemoryBank set skipped: no {path}/{MEMORIES} and {QUESTIONS} (copy eval_data/en of "
            "github:zhongwanjun/MemoryBank-SiliconFriend there, or pass its path)"
        )
    return None


def _day_ms(day: str) -> int:
    return int(datetime.strptime(day, "%Y-%m-%d").replace(hour=9, tzinfo=UTC).timestamp() * 1000)


def _clean(text: object) -> str:
    return " ".join(str(text or "").split())


def build(path: Path = DEFAULT_PATH) -> tuple[list[Turn], list[SetQuestion]]:
    """The stored turns (storage order) and the questions, evidence as turn indexes."""
    memories = json.loads((path / MEMORIES).read_text(encoding="utf-8"))
    asked: dict[str, list[str]] = {}
    for line in (path / QUESTIONS).read_text(encoding="utf-8").splitlines():
        if line.strip():
            asked.update({k.strip(): v for k, v in json.loads(line).items()})
    turns: list[Turn] = []
    questions: list[SetQuestion] = []
    seen: set[str] = set()
    for key, record in memories.items():
        user = key.strip()
        where: dict[str, int] = {}  # label -> turn index
        for d, (day, pairs) in enumerate(record["history"].items()):
            start = _day_ms(day)
            for p, pair in enumerate(pairs):
                for side, speaker, text in (
                    ("u", user, pair.get("query")),
                    ("a", ASSISTANT, pair.get("response")),
                ):
                    content = _clean(text)
                    if not content:
                        continue
                    where[f"{d}.{p}{side}"] = len(turns)
                    created = start + (2 * p + (side == "a")) * 60_000
                    turns.append(Turn(user, day, f"{speaker}: {content}", created))
        gold = GOLD[user]
        texts = asked[user]
        if len(gold) != len(texts):
            raise ValueError(
                f"MemoryBank labels for {user}: {len(gold)} for {len(texts)} questions"
            )
        for text, labels in zip(texts, gold, strict=True):
            if labels is None:
                continue
            question = _clean(text).strip('"').strip()
            if question in seen:
                continue
            seen.add(question)
            cls = "dated" if _DATED.search(question) else "undated"
            questions.append(SetQuestion(cls, question, user, tuple(where[x] for x in labels)))
    return turns, questions
