"""A relevance set from FriendsQA (Yang and Choi, SIGDIAL 2019): ``friends``.

Source: the public repository github:emorynlp/FriendsQA (Apache-2.0), file
``dat/friendsqa_tst.json``: 113 scenes of the TV series Friends (SQuAD-like: ``data[].title``
``s03_e21_c03`` = season, episode, scene; ``paragraphs[0]["utterances:"]`` = ``{"uid",
"speakers", "utterance"}``; ``qas[]`` = ``{"question", "answers": [{"utterance_id", ...}]}``).
The raw file is not in git: copy it to ``/work/data-sets/friendsqa/`` (or pass another
directory). Without it the set is skipped with a message naming the path.

Shaped like a user's memory of many multi-party conversations: one memory per spoken utterance
(``"<speaker>: <utterance>"``, the corpus's tokenisation undone: ``you 're`` -> ``you're``), one
project per episode (8 of them, ~260 utterances each), one session per scene, in the order
spoken (episodes a day apart, scenes an hour apart, turns a minute apart). Stage directions
(speaker ``#NOTE#``) are not stored: a memory of a chat holds what was said.

Gold evidence comes from the release, not from us: a question's evidence is the utterances
its annotated answer spans sit in (``utterance_id``), spoken ones only; a question whose every
answer is in a stage direction is left out. Of the rest, a fixed sample of ``SAMPLE``
questions (every k-th in file order) keeps the bench's cost near the other sets'.

Classes by question word: ``factoid`` (who / when / where: names, times, places) and
``reason`` (what / why / how: events and causes, the paraphrase-heavy kind).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bench.set_question import SetQuestion

DEFAULT_PATH = Path("/work/data-sets/friendsqa")
FILE = "friendsqa_tst.json"
CLASSES = ("factoid", "reason")
SAMPLE = 300
FIRST_DAY_MS = 1_700_000_000_000
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
NOTE = "#NOTE#"
_FACTOID = {"who", "when", "where"}
_DETOKENISE = [
    (re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m)\b"), r"\1"),
    (re.compile(r" ([,.!?;:%)])"), r"\1"),
    (re.compile(r"([($]) "), r"\1"),
    (re.compile(r"\bgon na\b"), "gonna"),
    (re.compile(r"\bwan na\b"), "wanna"),
]


@dataclass(frozen=True)
class Turn:
    episode: str
    scene: str
    text: str
    created_ms: int


def available(path: Path = DEFAULT_PATH) -> str | None:
    """None when the raw file is there, else why the set is skipped."""
    if not (path / FILE).is_file():
        return (
            f"FriendsQA set skipped: no {path}/{FILE} (copy dat/{FILE} of "
            "github:emorynlp/FriendsQA there, or pass its path)"
        )
    return None


def detokenise(text: str) -> str:
    out = " ".join(text.split())
    for pattern, repl in _DETOKENISE:
        out = pattern.sub(repl, out)
    return out


def build(path: Path = DEFAULT_PATH) -> tuple[list[Turn], list[SetQuestion]]:
    """The stored turns (storage order) and the sampled questions, evidence as turn indexes."""
    scenes = json.loads((path / FILE).read_text(encoding="utf-8"))["data"]
    episodes = sorted({s["title"].rsplit("_", 1)[0] for s in scenes})
    scenes = sorted(scenes, key=lambda s: str(s["title"]))
    turns: list[Turn] = []
    every: list[SetQuestion] = []
    seen: set[str] = set()
    for scene_no, scene in enumerate(scenes):
        title = str(scene["title"])
        episode = title.rsplit("_", 1)[0]
        start = FIRST_DAY_MS + episodes.index(episode) * DAY_MS + scene_no * HOUR_MS
        paragraph = scene["paragraphs"][0]
        kept: dict[int, int] = {}  # uid -> turn index
        for n, utterance in enumerate(paragraph["utterances:"]):
            speakers = [str(s) for s in utterance.get("speakers") or [] if s != NOTE]
            text = detokenise(str(utterance.get("utterance") or ""))
            if not speakers or not text:
                continue
            kept[int(utterance["uid"])] = len(turns)
            created = start + n * 60_000
            turns.append(Turn(episode, title, f"{' and '.join(speakers)}: {text}", created))
        for qa in paragraph.get("qas", []):
            evidence = tuple(
                dict.fromkeys(
                    kept[int(a["utterance_id"])]
                    for a in qa.get("answers", [])
                    if int(a["utterance_id"]) in kept
                )
            )
            question = detokenise(str(qa["question"]))
            if not evidence or question in seen:
                continue
            seen.add(question)
            word = question.split()[0].lower() if question.split() else ""
            cls = "factoid" if word in _FACTOID else "reason"
            every.append(SetQuestion(cls, question, episode, evidence))
    step = max(1, len(every) // SAMPLE)
    return turns, every[::step][:SAMPLE]
